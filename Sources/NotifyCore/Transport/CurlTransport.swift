#if !canImport(Darwin)
import CCurl
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
import Synchronization
import NotifySystem

/// HTTP through the system's libcurl, on one thread of its own that waits in poll() for
/// libcurl's sockets and timer (`ncurl_multi_wait`): while a request waits for a slow or
/// silent backend, nothing runs.
/// Connections are kept alive and reused, at most `max_connections` to one host, for
/// `keep_alive`; then libcurl is unloaded until the next request. Each request takes the
/// `request_timeout` in effect when it is made.
final class CurlTransport: HTTPTransport, HTTPLanes {
    private let loop: CurlLoop
    private let settings: SettingsStore

    /// libcurl is loaded for the first request, not before: a notifyd with nothing to
    /// send never loads it.
    init(settings: SettingsStore, replyLimit: Int) {
        self.settings = settings
        loop = CurlLoop(maximumConnections: max(1, settings[\.maxConnections]), replyLimit: replyLimit) { settings[\.keepAlive] }
        settings.subscribe { [weak self] in self?.settingsChanged() }
    }

    /// Whether libcurl is held now: from a request until `keep_alive` has passed.
    var holdsLibcurl: Bool { loop.holdsPool }
    /// Whether the HTTP thread waits, holding nothing, for the next request.
    var isParked: Bool { loop.isParked }

    func invalidate() { loop.stop() }

    /// New settings: the pool takes the new `max_connections`, and the loop looks again at
    /// when `keep_alive` lets libcurl go.
    private func settingsChanged() { loop.resize(to: max(1, settings[\.maxConnections])) }

    func networkChanged() { loop.networkChanged() }

    func perform(_ request: HTTPRequest) async -> HTTPOutcome {
        await loop.perform(request, timeoutMilliseconds: timeoutMilliseconds)
    }

    var lanes: (any HTTPLanes)? { self }

    var connectsOnly: Bool { true }

    var requestsPerConnection: Int { loop.multiplexes ? Int(NCURL_STREAMS_PER_CONNECTION) : 1 }

    func perform(_ request: HTTPRequest, lane: UInt64, then: @escaping @Sendable (HTTPOutcome) -> Void) {
        loop.hand(request, lane: lane, timeoutMilliseconds: timeoutMilliseconds, then: then)
    }

    func breakLane(_ lane: UInt64) { loop.breakLane(lane) }

    func endLane(_ lane: UInt64) { loop.endLane(lane) }

    private var timeoutMilliseconds: Int { max(1, Int(settings[\.requestTimeout] * 1000)) }
}
#endif
