#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Building backend URLs: every query value and path segment percent-encoded with the
/// RFC 3986 unreserved set only, so FCM tokens (':' '-'), WNS URIs ('/' '?' '&' '=') and
/// '+' arrive intact.
enum URLText {
    static func escape(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return escaped
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    static func url(base: URL, path: String, query: [(String, String)]) -> URL? {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += "/" + path
        if !query.isEmpty {
            text += "?" + query.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
        }
        return URL(string: text)
    }
}

/// `Retry-After`: delta-seconds or an HTTP date.
enum RetryAfter {
    /// The seconds to wait from `now`. A header that is there but cannot be read (a negative
    /// number, a date in no form HTTP knows) is 0: the server asked for a pause without
    /// saying how long, which the backoff policy fills in; only an absent one is nil (for a
    /// 403, the difference between throttling and refused credentials).
    static func parse(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingSpaces(), !value.isEmpty else { return nil }
        // Any size a backend or proxy sends is taken; the backoff policy caps what is honoured.
        if let seconds = Double(value) { return seconds.isFinite && seconds >= 0 ? seconds : 0 }
        guard let date = httpDate(value, now: now) else { return 0 }
        return max(0, date.timeIntervalSince(now))
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// An HTTP date in any of the three forms RFC 9110 (5.6.7) has recipients accept: the
    /// one servers send now, `Sun, 06 Nov 1994 08:49:37 GMT`, and the two obsolete ones,
    /// RFC 850's `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's `Sun Nov  6 08:49:37 1994`.
    /// `now` places RFC 850's two-digit year: in the century that puts it at most 50 years ahead.
    static func httpDate(_ text: String, now: Date = Date()) -> Date? {
        let words = text.split(separator: " ")
        let day: Int?, month: String, year: Int?, clock: Substring
        switch words.count {
        case 6 where words[0].hasSuffix(",") && words[5].uppercased() == "GMT":
            (day, month, year, clock) = (Int(words[1]), String(words[2]), Int(words[3]), words[4])
        case 4 where words[0].hasSuffix(",") && words[3].uppercased() == "GMT":
            let date = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard date.count == 3, date[2].count == 2, let short = Int(date[2]) else { return nil }
            (day, month, year, clock) = (Int(date[0]), String(date[1]), fullYear(short, now: now), words[2])
        case 5 where !words[0].hasSuffix(","):
            (day, month, year, clock) = (Int(words[2]), String(words[1]), Int(words[4]), words[3])
        default:
            return nil
        }
        guard let day, let year, let month = months.firstIndex(of: month.lowercased()) else { return nil }
        let time = clock.split(separator: ":")
        guard time.count == 3, let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]),
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(hour)
        fields.tm_min = Int32(minute)
        fields.tm_sec = Int32(second)
        var seconds = timegm(&fields)
        // timegm moves a day that does not exist (29 Feb 2100) into the next month: refuse it.
        var check = tm()
        guard seconds != -1, gmtime_r(&seconds, &check) != nil, check.tm_mday == Int32(day), check.tm_mon == Int32(month) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// RFC 9110: a two-digit year that would be more than 50 years ahead is the latest past
    /// year with those digits.
    private static func fullYear(_ twoDigits: Int, now: Date) -> Int {
        var seconds = time_t(now.timeIntervalSince1970)
        var fields = tm()
        let current = gmtime_r(&seconds, &fields) != nil ? Int(fields.tm_year) + 1900 : 2000
        let year = current / 100 * 100 + twoDigits
        return year > current + 50 ? year - 100 : year
    }
}
