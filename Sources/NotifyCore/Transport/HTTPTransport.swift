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
    /// The transport's lanes, where it keeps their order on its own thread (libcurl); nil
    /// where requests of a lane would go side by side (URLSession).
    var lanes: (any HTTPLanes)? { get }
    /// Ends the transport: requests in flight fail, its thread or session goes.
    func invalidate()
    /// The network changed: requests from now on do not reuse a connection opened or last
    /// used before, which may lead nowhere (the link it went over is gone) and would hold a
    /// request until its timeout instead of failing it at once.
    func networkChanged()
    /// False where `HTTPRequest.connectOnly` is not carried out (URLSession).
    var connectsOnly: Bool { get }
    /// Requests one connection to the backend carries at once: 1 over HTTP/1.1, more once
    /// the backend answered over HTTP/2.
    var requestsPerConnection: Int { get }
}

struct HTTPRequest: Sendable {
    var method: String
    var url: URL
    /// Whole header lines, "Name: value".
    var headers: [String]
    /// Sent with a Content-Length even when empty; nil sends no body at all.
    var body: Data?
    /// Only connect, on a connection of its own (with the TLS handshake of an https URL),
    /// and send nothing: a `response` with status 0 means the connection was made.
    var connectOnly = false
}

enum HTTPOutcome: Sendable {
    /// Any status, 3xx included: redirects are the caller's to report.
    case response(status: Int, location: String?, retryAfter: String?, body: Data)
    /// The body went past the bound; what came was dropped.
    case tooLarge
    case failed(HTTPFailure)
    /// Not sent: an earlier request of its lane was not answered with a 2xx.
    case notAttempted
}

/// Requests handed over in lanes, each request of a lane sent only once the one before it
/// was answered with a 2xx.
protocol HTTPLanes: Sendable {
    /// Hands `request` over now, after those of `lane` handed over before it: it starts
    /// only once the one before it in the lane was answered with a 2xx, straight from the
    /// transport's thread, with no hop to the caller in between. After any other outcome
    /// the lane is broken: its later requests are not sent (`notAttempted`), however late
    /// they come, until `endLane`. `then` is called on the transport's thread.
    func perform(_ request: HTTPRequest, lane: UInt64, then: @escaping @Sendable (HTTPOutcome) -> Void)
    /// Breaks `lane` as a failed request would: for a request the caller could not hand over.
    func breakLane(_ lane: UInt64)
    /// Forgets `lane`, once none of its requests is under way or will be handed over.
    func endLane(_ lane: UInt64)
}

extension HTTPTransport {
    var lanes: (any HTTPLanes)? { nil }

    var connectsOnly: Bool { false }

    /// URLSession multiplexes HTTP/2 by itself, but does not say when: counted as HTTP/1.1.
    var requestsPerConnection: Int { 1 }
}

extension HTTPOutcome {
    /// What lets the next request of a lane go.
    var isSuccess: Bool {
        if case .response(let status, _, _, _) = self { return (200...299).contains(status) }
        return false
    }
}

/// Why no response came, in the kinds notifyd explains differently.
struct HTTPFailure: Error, Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// No answer in time, on a connection that was made: the backend may have taken the request.
        case timedOut
        /// The name was not resolved, or no connection was made, in time.
        case connectTimedOut
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
        [.connectionRefused, .noRoute, .hostNotFound, .connectTimedOut, .untrustedCertificate, .tlsFailed].contains(kind)
    }
}
