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
    static func parse(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingSpaces(), !value.isEmpty else { return nil }
        // Any size a backend or proxy sends is taken; the backoff policy caps what is honoured.
        if let seconds = Double(value) { return seconds.isFinite && seconds >= 0 ? seconds : nil }
        guard let date = httpDate(value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// An HTTP date as RFC 9110 has servers send it: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ text: String) -> Date? {
        let words = text.split(separator: " ")
        guard words.count == 6, words[0].hasSuffix(","), words[5].uppercased() == "GMT",
              let day = Int(words[1]), let month = months.firstIndex(of: words[2].lowercased()), let year = Int(words[3]) else { return nil }
        let clock = words[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
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
}
