#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket
import NotifySystem

/// What a handler decides for one request.
enum HTTPHandlerResult: Sendable {
    case respond(HTTPResponse)
    /// Close the connection without answering, as a failing network would.
    case drop
}

/// Handed to the handler so it can wait in a way `stop()` interrupts.
struct HTTPRequestContext: Sendable {
    let stop: StopSignal

    /// Waits `seconds`; returns false when the server stops meanwhile.
    func pause(seconds: Double) -> Bool {
        stop.sleep(seconds: seconds)
    }
}

typealias HTTPHandler = @Sendable (HTTPRequest, HTTPRequestContext) -> HTTPHandlerResult

/// One accepted socket, served on its own thread until either side closes it.
///
/// Not shared: it is created on, used by and dies with its connection thread.
final class HTTPConnection {
    let fd: Int32
    let stop: StopSignal
    let limits: HTTPLimits
    /// Received bytes not yet consumed by a request (pipelined requests stay here).
    var buffer: [UInt8] = []

    init(fd: Int32, stop: StopSignal, limits: HTTPLimits) {
        self.fd = fd
        self.stop = stop
        self.limits = limits
    }

    func serve(_ handler: HTTPHandler) {
        var lingers = false
        defer {
            if lingers { drainBeforeClose() }
            closeDescriptor(fd)
        }
        let context = HTTPRequestContext(stop: stop)
        while !stop.isTriggered {
            switch readRequest() {
            case .closed:
                return
            case .rejected(let rejection):
                _ = sendAll(fd, rejection.response.serialized(closing: true))
                lingers = true
                return
            case .request(let request):
                switch handler(request, context) {
                case .drop:
                    return
                case .respond(var response):
                    // A HEAD answer announces the body's length but carries none.
                    if request.method == "HEAD" { response.omitsBody = true }
                    let keepOpen = request.keepsAlive && !stop.isTriggered
                    let bytes = response.serialized(
                        closing: !keepOpen,
                        keepAliveForHTTP10: keepOpen && request.minorVersion == 0
                    )
                    guard sendAll(fd, bytes), keepOpen else { return }
                }
            }
        }
    }

    enum Received {
        case data
        case closed
        case stopped
        case timedOut
    }

    /// Appends whatever the peer sends next, waking early when the server stops.
    func receive(timeoutMilliseconds: Int32? = nil) -> Received {
        var entries = [
            pollfd(fd: fd, events: pollReadable, revents: 0),
            pollfd(fd: stop.readEnd, events: pollReadable, revents: 0),
        ]
        let ready = retryingOnInterrupt { poll(&entries, 2, timeoutMilliseconds ?? limits.idleTimeoutMilliseconds) }
        if ready == 0 { return .timedOut }
        if ready < 0 || entries[1].revents != 0 { return .stopped }
        // Not zeroed first: clearing 64 KiB for every read was a fifth of the backend's
        // instructions per request, and it shares the machine with the client it measures.
        let count = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 65_536) { chunk in
            let count = retryingOnInterrupt { recv(fd, chunk.baseAddress, chunk.count, 0) }
            if count > 0 { buffer.append(contentsOf: chunk[0..<count]) }
            return count
        }
        return count > 0 ? .data : .closed
    }

    /// After an error response the client may still be sending a body; closing with
    /// unread data would reset the connection and could destroy the response in
    /// flight, so read (and discard) a bounded amount first.
    private func drainBeforeClose() {
        _ = shutdown(fd, Int32(SHUT_WR))
        var discarded = 0
        while discarded < limits.maxBodyBytes {
            buffer.removeAll(keepingCapacity: true)
            guard case .data = receive(timeoutMilliseconds: 1_000) else { return }
            discarded += buffer.count
        }
    }
}

/// Bounds that keep one client from exhausting the server.
struct HTTPLimits: Sendable {
    var maxHeadBytes = 64 * 1024
    var maxBodyBytes = 1024 * 1024
    /// How long a connection may sit idle (or stall mid-request) before it is closed.
    var idleTimeoutMilliseconds: Int32 = 60_000
}
