import Foundation

enum BackendURL {
    /// An http(s) URL with a host; a trailing slash is dropped so ids and routes join cleanly.
    static func validate(_ text: String) throws(CoreError) -> String {
        var trimmed = text.trimmingCharacters(in: .whitespaces)
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else {
            throw .invalidArgument("'\(text)' is not a backend URL; expected something like https://backend.example.com")
        }
        guard url.user == nil, url.password == nil else {
            throw .invalidArgument("put the user in `notifyctl login USER`, not in the backend URL")
        }
        if let problem = BackendAPISuffix.problem(text) { throw .invalidArgument(problem) }
        return trimmed
    }
}

/// notifyd adds the tutorial's `/api/` to every route itself: a backend URL that already
/// ends in it reaches `/api/api/register`, and the 404s that follow look like token or tag
/// problems. Such a URL is refused with the URL to use instead.
public enum BackendAPISuffix {
    public static func problem(_ text: String) -> String? {
        var trimmed = text.trimmingCharacters(in: .whitespaces)
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard trimmed.lowercased().hasSuffix("/api"), let url = URL(string: trimmed), url.host != nil, url.path.lowercased().hasSuffix("/api") else { return nil }
        let base = String(trimmed.dropLast(4))
        return "the backend URL '\(text)' ends in /api, which notifyd adds to every route itself (/api/register, /api/notifications); use \(base)"
    }
}
