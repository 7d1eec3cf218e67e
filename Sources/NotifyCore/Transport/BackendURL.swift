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

/// The checks every backend URL passes, wherever it comes from (config file, environment,
/// flag, `notifyctl login --backend`, a saved credentials file): each request carries the
/// password, so it goes over https, or over plain http only to this machine.
public enum BackendURL {
    /// An http(s) URL with a host; a trailing slash is dropped so ids and routes join cleanly.
    public static func validate(_ text: String, allowInsecureHTTP: Bool) throws(CoreError) -> String {
        var trimmed = text.trimmingSpaces()
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        let shown = BackendText.withoutUserInfo(trimmed)
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else {
            throw .invalidArgument("'\(BackendText.withoutUserInfo(text.trimmingSpaces()))' is not a backend URL; expected something like https://backend.example.com")
        }
        guard url.user == nil, url.password == nil, shown == trimmed else {
            throw .invalidArgument("the backend URL '\(shown)' must not hold a user or password: give the user to `notifyctl login USER`, which asks for the password")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw .invalidArgument("the backend URL '\(shown)' names port \(port), which no server can listen on; a port is a number from 1 to 65535")
        }
        // Routes are added after the URL (`/api/register`): after a query or a fragment
        // they would be read as part of it, and every request would reach the base URL.
        guard url.query == nil, url.fragment == nil, !trimmed.contains("?"), !trimmed.contains("#") else {
            throw .invalidArgument("the backend URL '\(shown)' must not hold a query (?…) or a fragment (#…): notifyd adds each route's path after it; give the base URL, like https://backend.example.com/app")
        }
        if let refusal = insecureRefusal(url, allowInsecureHTTP: allowInsecureHTTP) {
            throw .invalidArgument(refusal)
        }
        if let problem = BackendAPISuffix.problem(text) { throw .invalidArgument(problem) }
        return trimmed
    }

    /// What a login is for: the scheme, host and port a backend URL reaches
    /// (`https://h.example:443`), as a browser's origin or git's credential helpers tell
    /// one server from another. Two URLs of one origin (another path, say) are one backend
    /// as far as a password goes; another origin needs a login of its own.
    public static func origin(_ text: String?) -> String? {
        guard let text, let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(host):\(port)"
    }

    /// Why `url` may not be used (plain http to another machine), or nil when it may.
    public static func insecureRefusal(_ url: URL, allowInsecureHTTP: Bool) -> String? {
        guard url.scheme?.lowercased() == "http", !allowInsecureHTTP, !isLoopback(url.host ?? "") else { return nil }
        let shown = BackendText.withoutUserInfo(url.absoluteString)
        let spelling = (url.host ?? "").hasSuffix(".") ? " written without a trailing dot, which sends the name to DNS" : ""
        return "refusing plain http to '\(shown)': every request carries the password, which http sends in clear; "
            + "use https:// (plain http is allowed only to this machine: localhost, 127.0.0.0/8, ::1\(spelling); "
            + "allow_insecure_http = true overrides this, at your own risk)"
    }

    /// `localhost`, 127.0.0.0/8 and ::1: traffic that never leaves the machine. What counts
    /// is where libcurl connects, not how the name reads: it connects to an address literal
    /// as written, and resolves `localhost` itself, but it asks DNS for any other spelling
    /// (`localhost.`, `127.0.0.1.` with the root's trailing dot, `127.1`), and whatever
    /// answers there would get the password in clear. So only those exact forms pass.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        return false
    }
}

/// notifyd adds the tutorial's `/api/` to every route itself: a backend URL that already
/// ends in it reaches `/api/api/register`, and the 404s that follow look like token or tag
/// problems. Such a URL is refused with the URL to use instead.
public enum BackendAPISuffix {
    public static func problem(_ text: String) -> String? {
        var trimmed = text.trimmingSpaces()
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard trimmed.lowercased().hasSuffix("/api"), let url = URL(string: trimmed), url.host != nil, url.path.lowercased().hasSuffix("/api") else { return nil }
        let base = String(trimmed.dropLast(4))
        return "the backend URL '\(text)' ends in /api, which notifyd adds to every route itself (/api/register, /api/notifications); use \(base)"
    }
}
