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

/// HTTP through the system's libcurl, on one thread of its own that waits in
/// `curl_multi_poll`: while a request waits for a slow or silent backend, nothing runs.
/// Connections are kept alive and reused, at most `max_connections` to one host, for
/// `keep_alive`; then libcurl is unloaded until the next request. Each request takes the
/// `request_timeout` in effect when it is made.
final class CurlTransport: HTTPTransport {
    private let loop: Result<CurlLoop, HTTPFailure>
    private let settings: SettingsStore

    init(settings: SettingsStore, replyLimit: Int) {
        self.settings = settings
        let connections = max(1, settings[\.maxConnections])
        loop = CurlLoop.openPool(connections: connections).map { pool in
            CurlLoop(multi: pool, maximumConnections: connections, replyLimit: replyLimit) { settings[\.keepAlive] }
        }
    }

    /// Whether libcurl is held now: false once `keep_alive` has passed with no request.
    var holdsLibcurl: Bool { (try? loop.get())?.holdsPool ?? false }

    func invalidate() {
        if case .success(let loop) = loop { loop.stop() }
    }

    func settingsChanged() {
        if case .success(let loop) = loop { loop.resize(to: max(1, settings[\.maxConnections])) }
    }

    func networkChanged() {
        if case .success(let loop) = loop { loop.networkChanged() }
    }

    func perform(_ request: HTTPRequest) async -> HTTPOutcome {
        switch loop {
        case .success(let loop): await loop.perform(request, timeoutMilliseconds: timeoutMilliseconds)
        case .failure(let failure): .failed(failure)
        }
    }

    var keepsLanes: Bool { true }

    func perform(_ request: HTTPRequest, lane: UInt64, then: @escaping @Sendable (HTTPOutcome) -> Void) {
        switch loop {
        case .success(let loop): loop.hand(request, lane: lane, timeoutMilliseconds: timeoutMilliseconds, then: then)
        case .failure(let failure): then(.failed(failure))
        }
    }

    func breakLane(_ lane: UInt64) {
        if case .success(let loop) = loop { loop.breakLane(lane) }
    }

    func endLane(_ lane: UInt64) {
        if case .success(let loop) = loop { loop.endLane(lane) }
    }

    private var timeoutMilliseconds: Int { max(1, Int(settings[\.requestTimeout] * 1000)) }
}
#endif
