import Foundation
import NotifyCore
import NotifyProtocol
import NotifySocket
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Accepts connections on the listening socket and serves JSON lines on each.
/// The accept loop is a thread blocked in poll(): no wake-ups while idle.
final class SocketServer: Sendable {
    private let listener: Int32
    private let router: CommandRouter
    private let logger: Logger
    private let wakePipe: (read: Int32, write: Int32)
    private let acceptDone = DispatchSemaphore(value: 0)
    private let state = Mutex(ServerState())

    private struct ServerState {
        var connections: [Int: Connection] = [:]
        var tasks: [Int: Task<Void, Never>] = [:]
        var nextNumber = 1
        var stopped = false
    }

    init(listener: Int32, router: CommandRouter, logger: Logger) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError(.io, "cannot create a pipe: \(String(cString: strerror(errno)))") }
        self.listener = listener
        self.router = router
        self.logger = logger
        self.wakePipe = (fds[0], fds[1])
    }

    func start() {
        let thread = Thread { [self] in
            acceptLoop()
            acceptDone.signal()
        }
        thread.name = "notifyd-accept"
        thread.start()
    }

    /// Stops accepting; the listening fd is left to its owner.
    func stopAccepting() {
        let alreadyStopped = state.withLock { state in
            defer { state.stopped = true }
            return state.stopped
        }
        guard !alreadyStopped else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
        acceptDone.wait()
        _ = close(wakePipe.read)
        _ = close(wakePipe.write)
    }

    /// Ends every connection once its pending replies are written (bounded by `grace`).
    func closeConnections(grace: Double) async {
        let (connections, tasks) = state.withLock { (Array($0.connections.values), Array($0.tasks.values)) }
        for connection in connections { connection.stopReading() }
        let allDone = Task { for task in tasks { await task.value } }
        let timer = Task {
            try? await Task.sleep(for: .seconds(grace))
            for connection in connections { connection.close() }
        }
        await allDone.value
        timer.cancel()
    }

    private func acceptLoop() {
        let ownUID = currentUID()
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("poll on the socket failed: \(String(cString: strerror(errno))); no longer accepting connections")
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno != EINTR && errno != EAGAIN && errno != ECONNABORTED {
                    logger.warning("accept failed: \(String(cString: strerror(errno)))")
                    // Out of fds and the like: do not spin.
                    usleep(100_000)
                }
                continue
            }
            UnixSocket.prepareAcceptedSocket(fd)
            // Only the user who owns the daemon (or root) may talk to it, whatever the file mode says.
            if let peer = UnixSocket.peerUID(fd), peer != ownUID && peer != 0 {
                logger.warning("refused a connection from uid \(peer): notifyd serves uid \(ownUID) only")
                _ = close(fd)
                continue
            }
            serve(fd)
        }
    }

    private func serve(_ fd: Int32) {
        let number = state.withLock { state in
            defer { state.nextNumber += 1 }
            return state.nextNumber
        }
        let connection = Connection(fd: fd, number: number)
        let router = self.router
        let logger = self.logger
        let task = Task { [weak self] in
            await Self.run(connection, router: router, logger: logger)
            self?.state.withLock { state in
                state.connections[number] = nil
                state.tasks[number] = nil
            }
        }
        state.withLock { state in
            state.connections[number] = connection
            state.tasks[number] = task
        }
    }

    /// Reads requests in order and writes their replies in the same order; waiting
    /// replies overlap, so a burst of `set-token` lines is accepted at once.
    private static func run(_ connection: Connection, router: CommandRouter, logger: Logger) async {
        logger.debug("connection \(connection.number) opened")
        var previous: Task<Void, Never>?
        for await incoming in connection.incoming(maximumLineLength: WireCoding.maximumLineLength) {
            switch incoming {
            case .line(let bytes):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                let reply = await router.handle(bytes, from: connection)
                let before = previous
                previous = Task {
                    await before?.value
                    connection.send(await reply.resolve())
                }
            case .tooLong:
                await previous?.value
                connection.send(Reply.failure(nil, WireError(code: .lineTooLong, message: "request line longer than \(WireCoding.maximumLineLength) bytes; closing the connection")))
            }
        }
        await previous?.value
        router.hub.unsubscribe(connection)
        connection.close()
        logger.debug("connection \(connection.number) closed")
    }
}
