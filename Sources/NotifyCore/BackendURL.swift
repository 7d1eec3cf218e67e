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
        return trimmed
    }
}
