import Foundation
import NotifySocket
import Synchronization

/// Something on a temporary socket that is not notifyd. It runs in the test process, so it
/// is of the user notifyctl runs as, and notifyctl's check of the listener passes: what
/// follows is what a program of one's own can make notifyctl do. Each connection is served
/// by `serve`, on a thread of its own, until the client goes or `stop()`.
final class HostileListener: Sendable {
    let directory: String
    let path: String
    private let listener: Int32
    private let accepting: Bool
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        /// Connections being served; a serving thread closes its own, under the lock.
        var open: Set<Int32> = []
        /// Connected by the test itself to fill the queue of a listener that accepts nothing.
        var held: [Int32] = []
    }

    /// `accepting: false` never accepts, and a client of its own fills its queue (of one):
    /// the next connect waits, on Linux, until the queue has room.
    init(accepting: Bool = true, serve: @escaping @Sendable (Int32) -> Void) throws {
        directory = "/tmp/nd-hostile-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        path = directory + "/notifyd.sock"
        listener = try UnixSocket.listen(path: path, backlog: accepting ? SOMAXCONN : 0)
        self.accepting = accepting
        guard accepting else {
            let first = try UnixSocket.connect(path: path)
            state.withLock { $0.held.append(first) }
            return
        }
        let listener = self.listener
        Thread { [self] in
            while let fd = self.acceptNext(listener) {
                Thread {
                    serve(fd)
                    self.state.withLock { state in
                        state.open.remove(fd)
                        close(fd)
                    }
                }.start()
            }
            close(listener)
        }.start()
    }

    /// The next connection, or nil once stopped. Polls, so that `stop()` needs no more
    /// than a flag to end it.
    private func acceptNext(_ listener: Int32) -> Int32? {
        while true {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 50)
            let accepted = ready > 0 ? accept(listener, nil, nil) : -1
            let kept = state.withLock { state -> Bool? in
                if state.stopped {
                    if accepted >= 0 { close(accepted) }
                    return nil
                }
                guard accepted >= 0 else { return false }
                state.open.insert(accepted)
                return true
            }
            switch kept {
            case nil: return nil
            case true?: return accepted
            case false?: continue
            }
        }
    }

    /// Ends every connection (a serving thread's next read or write fails) and stops
    /// accepting: the accept loop sees the flag within one poll and closes the listener.
    func stop() {
        state.withLock { state in
            state.stopped = true
            for fd in state.open { shutdown(fd, Int32(SHUT_RDWR)) }
            for fd in state.held { close(fd) }
            state.held = []
        }
        if !accepting { close(listener) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with a listener and always stops it.
    static func with<T>(accepting: Bool = true, serve: @escaping @Sendable (Int32) -> Void, _ body: (HostileListener) async throws -> T) async throws -> T {
        let listener = try HostileListener(accepting: accepting, serve: serve)
        defer { listener.stop() }
        return try await body(listener)
    }

    // MARK: What a connection gets

    /// Writes `bytes` over and over until the client is gone.
    static func repeating(_ bytes: [UInt8]) -> @Sendable (Int32) -> Void {
        { fd in
            let chunk = Array([[UInt8]](repeating: bytes, count: max(1, 65_536 / bytes.count)).joined())
            while (try? UnixSocket.writeAll(fd, chunk)) != nil {}
        }
    }

    /// `first`, then `rest` over and over.
    static func starting(with first: [UInt8], then rest: @escaping @Sendable (Int32) -> Void) -> @Sendable (Int32) -> Void {
        { fd in
            guard (try? UnixSocket.writeAll(fd, first)) != nil else { return }
            rest(fd)
        }
    }

    /// `line` and a newline five times a second: each read gets a whole line, and never
    /// the answer it waits for.
    static func slowly(_ line: String) -> @Sendable (Int32) -> Void {
        { fd in
            while (try? UnixSocket.writeAll(fd, Array((line + "\n").utf8))) != nil { usleep(200_000) }
        }
    }

    /// One byte of `bytes` at a time, 50 a second, never a newline: each read gets
    /// something well within any timeout per read.
    static func trickling(_ bytes: [UInt8]) -> @Sendable (Int32) -> Void {
        { fd in
            var index = 0
            while (try? UnixSocket.writeAll(fd, [bytes[index % bytes.count]])) != nil {
                index += 1
                usleep(20_000)
            }
        }
    }

    /// Reads whatever comes and answers nothing.
    static let silent: @Sendable (Int32) -> Void = { fd in
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Answers each request line with what `reply` makes of its `cmd` and `id` (the id as
    /// JSON text), then, after `watch`, writes `events` and hangs up.
    static func answering(events: [String] = [], _ reply: @escaping @Sendable (_ command: String, _ id: String) -> String) -> @Sendable (Int32) -> Void {
        { fd in
            let reader = LineReader(fd: fd, maximumLength: 1 << 20)
            while case .line(let bytes) = reader.next() {
                let request = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
                let command = request?["cmd"] as? String ?? ""
                let id = (request?["id"]).flatMap { try? JSONSerialization.data(withJSONObject: $0, options: .fragmentsAllowed) }
                    .map { String(decoding: $0, as: UTF8.self) } ?? "null"
                guard (try? UnixSocket.writeAll(fd, Array((reply(command, id) + "\n").utf8))) != nil else { return }
                if command == "watch" {
                    _ = try? UnixSocket.writeAll(fd, Array(events.map { $0 + "\n" }.joined().utf8))
                    return
                }
            }
        }
    }
}
