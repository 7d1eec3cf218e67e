#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How notifyd makes one HTTP request: libcurl on Linux (`CurlTransport`), URLSession on
/// macOS (`URLSessionTransport`). Either way no redirect is followed (a request carries the
/// password) and a reply body is read up to a bound, never further.
protocol HTTPTransport: Sendable {
    func perform(_ request: HTTPRequest) async -> HTTPOutcome
    /// Ends the transport: requests in flight fail, its thread or session goes.
    func invalidate()
    /// A reload replaced the settings: the pool takes the new `max_connections`.
    func settingsChanged()
    /// The network changed: requests from now on do not reuse a connection opened or last
    /// used before, which may lead nowhere (the link it went over is gone) and would hold a
    /// request until its timeout instead of failing it at once.
    func networkChanged()
}

struct HTTPRequest: Sendable {
    var method: String
    var url: URL
    /// Whole header lines, "Name: value".
    var headers: [String]
    /// Sent with a Content-Length even when empty; nil sends no body at all.
    var body: Data?
}

enum HTTPOutcome: Sendable {
    /// Any status, 3xx included: redirects are the caller's to report.
    case response(status: Int, location: String?, retryAfter: String?, body: Data)
    /// The body went past the bound; what came was dropped.
    case tooLarge
    case failed(HTTPFailure)
}

/// Why no response came, in the kinds notifyd explains differently.
struct HTTPFailure: Error, Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case timedOut
        case connectionRefused
        /// No route to the host: this machine is offline, or off the backend's network
        /// (`ENETUNREACH`, `ENETDOWN`; URLSession's "not connected to the internet").
        case noRoute
        case hostNotFound
        case connectionLost
        case untrustedCertificate
        case tlsFailed
        case cancelled
        case other
    }

    var kind: Kind
    /// The HTTP library's own words.
    var detail: String

    /// Failures of reaching the backend at all, as opposed to losing it midway.
    var isConnecting: Bool {
        [.connectionRefused, .noRoute, .hostNotFound, .untrustedCertificate, .tlsFailed].contains(kind)
    }
}
