import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket
import NotifySystem
import Synchronization

public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// A small blocking HTTP/1.1 server: one accept thread, one thread per connection.
///
/// Plain threads rather than Swift concurrency on purpose: every socket call here
/// blocks, and blocking the cooperative pool would starve the callers' tasks (and
/// the tests that drive this server from async code).
final class HTTPServer: Sendable {
    private enum State: Sendable {
        case idle
        case running(stop: StopSignal)
        case stopped
    }

    let host: String
    let requestedPort: Int
    let limits: HTTPLimits
    private let handler: HTTPHandler
    private let state = Mutex(State.idle)
    private let boundPort = Mutex(0)
    private let accepted = Mutex(0)
    private let ended = Mutex(0)
    /// Entered once by the accept thread and once per connection thread, so
    /// `stop()` can wait for all of them to end.
    private let threads = DispatchGroup()

    init(host: String, port: Int, limits: HTTPLimits = HTTPLimits(), handler: @escaping HTTPHandler) {
        self.host = host
        self.requestedPort = port
        self.limits = limits
        self.handler = handler
    }

    var port: Int { boundPort.withLock { $0 } }

    /// Connections accepted so far: lets tests see whether clients reuse connections.
    var acceptedConnections: Int { accepted.withLock { $0 } }

    /// Connections whose thread is done with them: whatever their client sent is handled
    /// (and logged) by then, so a test can tell that a client sent nothing.
    var endedConnections: Int { ended.withLock { $0 } }

    /// Binds, listens and starts the accept thread; returns the bound port.
    func start() throws(HTTPServerError) -> Int {
        let isIdle = state.withLock { state in
            if case .idle = state { return true }
            return false
        }
        guard isIdle else { throw HTTPServerError("the server was already started") }
        let listener = try makeListener()
        let stop: StopSignal
        do {
            stop = try StopSignal()
        } catch {
            closeDescriptor(listener.fd)
            throw error
        }
        boundPort.withLock { $0 = listener.port }
        state.withLock { $0 = .running(stop: stop) }
        threads.enter()
        NativeThread.start(name: "devbackend-accept") { [self] in
            acceptLoop(listener: listener.fd, stop: stop)
            threads.leave()
        }
        return listener.port
    }

    /// Closes the listener and every connection and waits for their threads.
    /// Safe to call more than once, and before `start()`.
    func stop() {
        let running: StopSignal? = state.withLock { state in
            defer { state = .stopped }
            if case .running(let stop) = state { return stop }
            return nil
        }
        guard let stop = running else { return }
        stop.trigger()
        threads.wait()
        stop.close()
    }

    private func makeListener() throws(HTTPServerError) -> (fd: Int32, port: Int) {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        guard (0...65_535).contains(requestedPort) else {
            throw HTTPServerError("port \(requestedPort) is out of range")
        }
        address.sin_port = in_port_t(UInt16(requestedPort).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HTTPServerError("'\(host)' is not an IPv4 address")
        }
        let fd = socket(AF_INET, streamSocketType, 0)
        guard fd >= 0 else { throw HTTPServerError("cannot create a socket: \(errnoText())") }
        setCloseOnExec(fd)
        // Lets a restarted backend reuse its port while old connections sit in TIME_WAIT.
        setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let reason = errnoText()
            closeDescriptor(fd)
            throw HTTPServerError("cannot bind \(host):\(requestedPort): \(reason)")
        }
        guard listen(fd, 128) == 0 else {
            let reason = errnoText()
            closeDescriptor(fd)
            throw HTTPServerError("cannot listen on \(host):\(requestedPort): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(fd, $0, &length)
            }
        }
        guard named == 0 else {
            let reason = errnoText()
            closeDescriptor(fd)
            throw HTTPServerError("cannot read the bound port: \(reason)")
        }
        // Non-blocking so a connection that vanishes between poll() and accept()
        // cannot leave the accept thread stuck where stop() cannot reach it.
        setNonBlocking(fd, true)
        return (fd, Int(UInt16(bigEndian: actual.sin_port)))
    }

    private func acceptLoop(listener: Int32, stop: StopSignal) {
        defer { closeDescriptor(listener) }
        while true {
            var entries = [
                pollfd(fd: listener, events: pollReadable, revents: 0),
                pollfd(fd: stop.readEnd, events: pollReadable, revents: 0),
            ]
            let ready = retryingOnInterrupt { poll(&entries, 2, -1) }
            if ready < 0 || entries[1].revents != 0 { return }
            guard entries[0].revents & pollReadable != 0 else {
                if entries[0].revents & pollFailure != 0 { return }
                continue
            }
            let client = retryingOnInterrupt { acceptClosingOnExec(listener) }
            guard client >= 0 else {
                if errno == EMFILE || errno == ENFILE {
                    // Out of descriptors: back off instead of spinning on poll().
                    guard stop.sleep(seconds: 0.1) else { return }
                }
                continue
            }
            configure(client: client)
            accepted.withLock { $0 += 1 }
            threads.enter()
            NativeThread.start(name: "devbackend-conn") { [self] in
                HTTPConnection(fd: client, stop: stop, limits: limits).serve(handler)
                ended.withLock { $0 += 1 }
                threads.leave()
            }
        }
    }

    private func configure(client: Int32) {
        setCloseOnExec(client)
        // Darwin's accept() copies O_NONBLOCK from the listener; connections block.
        setNonBlocking(client, false)
        disableSigpipe(client)
        setSendTimeout(client, seconds: 10)
        setSocketOption(client, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }
}
