#if !canImport(Darwin)
import CCurl

/// How many connections to the backend libcurl may open: over HTTP/1.1 one per request in
/// flight, up to `max_connections`; over HTTP/2 only as many as the requests in flight fill.
///
/// An HTTP/2 server ends a connection after so many requests (nginx's `keepalive_requests`,
/// 1,000 by default) with a GOAWAY, and refuses the streams sent after it. libcurl (7.88)
/// retries each refused request, and starts each new one, on a connection of its own
/// while the one ending is still in its pool: a burst that crossed the server's count
/// opened one connection per request then in flight (up to `max_connections`), each with
/// its own TLS handshake, where one would carry them all. Held to what the requests fill,
/// libcurl keeps those beyond it waiting, and hands them to the one new connection as soon
/// as it carries its first request.
extension CurlLoop {
    /// Sets libcurl's limit of connections to one host for `requests` in flight, where the
    /// backend multiplexes; `maximumConnections` where it does not (or has not said yet:
    /// a burst from no connection waits for the first to say, with `CURLOPT_PIPEWAIT`).
    func fitConnections(toCarry requests: Int) {
        guard let multi else { return }
        let streams = Int(NCURL_STREAMS_PER_CONNECTION)
        let wanted = multiplexing ? min(maximumConnections, max(1, (requests + streams - 1) / streams)) : maximumConnections
        guard wanted != hostConnections else { return }
        ncurl_multi_host_connections(multi, wanted)
        hostConnections = wanted
    }
}
#endif
