#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The wire's dates in their usual form, `2026-11-22T08:22:24Z`, read and written with
/// plain arithmetic. Foundation's ISO 8601 style builds a Gregorian calendar and reads
/// /etc/localtime the first time it is used, a seventh of what `notifyctl status` spent;
/// anything not in this exact form still goes to Foundation.
public enum WireDate {
    /// The date of `2026-11-22T08:22:24Z`; nil for any other form.
    public static func parse(_ text: String) -> Date? {
        var utf8 = text.utf8.makeIterator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        while let byte = utf8.next() {
            guard bytes.count < 20 else { return nil }
            bytes.append(byte)
        }
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month, of: year),
              hour < 24, minute < 60, second < 60 else { return nil }
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// `2026-11-22T08:22:24Z`, whole seconds (as JSONEncoder's `.iso8601` writes them).
    public static func format(_ date: Date) -> String {
        let total = Int((date.timeIntervalSince1970).rounded(.down))
        let days = total >= 0 ? total / 86400 : (total - 86399) / 86400
        let secondOfDay = total - days * 86400
        let (year, month, day) = civil(fromDaysSinceEpoch: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // Four digits at least, and a sign before year 0, as ISO 8601 extends them.
        let digits = "\(year.magnitude)"
        let yearText = (year < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }

    /// `format`'s text as UTF-8, appended to `bytes`, for a date from 1970 to 9999 (false,
    /// with nothing appended, for any other): for writers of JSON text that would only
    /// turn the string back into bytes.
    public static func append(_ date: Date, to bytes: inout [UInt8]) -> Bool {
        let seconds = date.timeIntervalSince1970
        guard seconds >= 0, seconds < 253_402_300_800 else { return false }
        let total = Int(seconds.rounded(.down))
        let days = total / 86400
        let secondOfDay = total - days * 86400
        let (year, month, day) = civil(fromDaysSinceEpoch: days)
        func two(_ value: Int) {
            bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
            bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
        }
        two(year / 100)
        two(year % 100)
        bytes.append(UInt8(ascii: "-"))
        two(month)
        bytes.append(UInt8(ascii: "-"))
        two(day)
        bytes.append(UInt8(ascii: "T"))
        two(secondOfDay / 3600)
        bytes.append(UInt8(ascii: ":"))
        two(secondOfDay / 60 % 60)
        bytes.append(UInt8(ascii: ":"))
        two(secondOfDay % 60)
        bytes.append(UInt8(ascii: "Z"))
        return true
    }

    private static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar, counting whole 400-year
    /// cycles (146,097 days each) from 0000-03-01 so that February ends each year.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month <= 2 ? year - 1 : year
        let cycle = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfCycle = marchYear - cycle * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfCycle = yearOfCycle * 365 + yearOfCycle / 4 - yearOfCycle / 100 + dayOfYear
        return cycle * 146_097 + dayOfCycle - 719_468
    }

    /// The inverse of `daysSinceEpoch`.
    private static func civil(fromDaysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let cycle = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfCycle = shifted - cycle * 146_097
        let yearOfCycle = (dayOfCycle - dayOfCycle / 1460 + dayOfCycle / 36524 - dayOfCycle / 146_096) / 365
        let dayOfYear = dayOfCycle - (365 * yearOfCycle + yearOfCycle / 4 - yearOfCycle / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfCycle + cycle * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
