#if !canImport(Darwin)
import CCurl

/// How many connections to the backend libcurl may open: over HTTP/1.1 one per request in
/// flight, up to `max_connections`; over HTTP/2 as many as the requests in flight fill, and
/// one spare.
///
/// An HTTP/2 server ends a connection after so many requests (nginx's `keepalive_requests`,
/// 1,000 by default) with a GOAWAY, and refuses the streams sent after it. libcurl (7.88)
/// retries each refused request, and starts each new one, on a connection of its own
/// while the one ending is still in its pool: a burst that crossed the server's count
/// opened one connection per request then in flight (up to `max_connections`), each with
/// its own TLS handshake, where one would carry them all. Held to what the requests fill,
/// libcurl keeps those beyond it waiting, and hands them to the one new connection as soon
/// as it carries its first request.
///
/// One connection more than that is allowed, as a spare: a GOAWAY at the server's count
/// falls on it, and the refused streams go on to it with no handshake. Held to what the
/// requests fill only, every later burst that crosses the count waits for a new
/// connection's TCP and TLS round trips (0.84–0.89× the 500/s floor, against 0.89–0.94×
/// for a burst whose GOAWAY the spare takes; contrib/benchmarks/RESULTS.md). A burst that
/// crosses the count with no spare opens two connections, not one, and one of them is the
/// next spare; a used spare is not replaced until then, so later bursts take the
/// handshake every other time instead of every time.
extension CurlLoop {
    /// Sets libcurl's limit of connections to one host for `requests` in flight, where the
    /// backend multiplexes (those they fill, and the spare); `maximumConnections` where it
    /// does not (or has not said yet: a burst from no connection waits for the first to
    /// say, with `CURLOPT_PIPEWAIT`).
    func fitConnections(toCarry requests: Int) {
        guard let multi else { return }
        let streams = Int(NCURL_STREAMS_PER_CONNECTION)
        let filled = max(1, (requests + streams - 1) / streams)
        let wanted = multiplexing ? min(maximumConnections, filled + 1) : maximumConnections
        guard wanted != hostConnections else { return }
        ncurl_multi_host_connections(multi, wanted)
        hostConnections = wanted
    }
}
#endif
