import Foundation

/// Building backend URLs: every query value and path segment percent-encoded with the
/// RFC 3986 unreserved set only, so FCM tokens (':' '-'), WNS URIs ('/' '?' '&' '=') and
/// '+' arrive intact.
enum URLText {
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
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
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        // Any size a backend or proxy sends is taken; the backoff policy caps what is honoured.
        if let seconds = Double(value) { return seconds.isFinite && seconds >= 0 ? seconds : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
