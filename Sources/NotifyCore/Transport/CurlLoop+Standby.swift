#if !canImport(Darwin)
import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A connection kept ready while a burst goes over HTTP/2.
///
/// Over HTTP/2 a burst rides one connection, and a server that ends a connection after so
/// many requests (nginx's `keepalive_requests`: 1,000 by default) ends it mid-burst with a
/// GOAWAY. Without a second connection, the requests it refused and every lane's next one
/// would wait for a new connection's TCP and TLS handshakes, two round trips, which nothing
/// announces in advance. So while a burst is under way a second connection to the backend
/// is opened and left unused, with nothing sent on it (no credentials either): libcurl keeps
/// taking the older one until it ends, then takes this one at once. Once the older one is
/// gone, the next burst (or the same one, going on) gets a new standby.
extension CurlLoop {
    /// Requests under way at once that make a burst worth a second connection: with fewer,
    /// a GOAWAY delays few of them, and a handshake is not spent on every pair of sends.
    static let burst = 4
    /// A standby connection is started a second after the last at the soonest: one that
    /// could not be made, or was closed at once (by a server that takes no idle connections,
    /// or by libcurl where it did not turn out to speak HTTP/2), costs a burst a handshake a
    /// second, not one a pass; and a server that ends its connections after some thousand
    /// requests ends them seconds apart.
    static let standbyInterval: Duration = .seconds(1)

    /// Starts a standby connection, to where the last response over HTTP/2 came from, when
    /// a burst has the pool's one connection alone; at the end of each pass, once the
    /// requests of the pass are started.
    func keepStandbyConnection() {
        guard let multi, standby == nil, multiplexing, !staleConnections, maximumConnections >= 2, running.count >= Self.burst,
              lastStandbyStart.map({ ContinuousClock.now - $0 >= Self.standbyInterval }) ?? true, ncurl_multi_open_sockets(multi) < 2,
              let job = running.first?.value, let url = multiplexedURL.flatMap(Self.serverRoot(of:))
        else { return }
        lastStandbyStart = .now
        // Given as long to connect as the requests are.
        standby = ncurl_standby_connection_start(multi, url, job.timeoutMilliseconds, Self.wholeSeconds(keepAlive()))
    }

    /// Whether `transfer` is the standby connection's: it finished (its connection made and
    /// left in the pool, or not), and is let go.
    func finishedStandby(_ transfer: UnsafeMutableRawPointer) -> Bool {
        guard transfer == standby, let multi else { return false }
        ncurl_transfer_free(multi, transfer)
        standby = nil
        return true
    }

    /// Lets go of a standby connection still being made, before its pool is freed.
    func dropStandby(from pool: UnsafeMutableRawPointer) {
        guard let transfer = standby else { return }
        ncurl_transfer_free(pool, transfer)
        standby = nil
    }

    /// `https://host:port/` of a request's URL: where a standby connection goes. Plain http
    /// does not multiplex here, and has no handshake worth saving.
    static func serverRoot(of url: URL) -> String? {
        guard url.scheme?.lowercased() == "https", var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        parts.user = nil
        parts.password = nil
        parts.percentEncodedPath = "/"
        parts.query = nil
        parts.fragment = nil
        return parts.string
    }
}
#endif
