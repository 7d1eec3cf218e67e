import NotifyCoding
import Foundation
import NotifyCore
@testable import NotifyDaemon
import NotifyProtocol
import NotifySocket
import NotifyTestSupport
import Synchronization

/// The socket server alone, on a temporary socket, in front of a scripted handler, so
/// tests can hold requests open, publish events and watch what the loop does at each limit.
final class ServerUnderTest: Sendable {
    let directory: String
    let socketPath: String
    let handler = ScriptedHandler()
    let logLines = LogCapture()
    let server: SocketServer
    private let listener: Int32
    private let quietCalls = CallTimes()
    /// When the loop said it had gone quiet.
    var quietMoments: [ContinuousClock.Instant] { quietCalls.all }

    /// `peerUID` stands in for the system's word on who connected.
    init(limits: ServerLimits, network: sending NetworkMonitor? = nil, peerUID: @escaping @Sendable (Int32) -> UInt32? = { UnixSocket.peerUID($0) }) throws {
        directory = "/tmp/nd-loop-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/s.sock"
        listener = try UnixSocket.listen(path: socketPath)
        let lines = logLines
        let logger = Logger(level: .debug) { level, message in lines.append("\(level.name): \(message)") }
        let calls = quietCalls
        server = try SocketServer(listener: listener, handler: handler, limits: limits, logger: logger,
                                  network: network, whenQuiet: { calls.add() }, peerUID: peerUID)
        server.start()
    }

    func stop() async {
        handler.release()
        await server.stopAccepting()
        await server.closeConnections()
        await server.finishRequests()
        close(listener)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` and always stops the server afterwards.
    static func with<T>(_ limits: ServerLimits, network: sending NetworkMonitor? = nil, peerUID: @escaping @Sendable (Int32) -> UInt32? = { UnixSocket.peerUID($0) },
                        _ body: (ServerUnderTest) async throws -> T) async throws -> T {
        let server = try ServerUnderTest(limits: limits, network: network, peerUID: peerUID)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    var log: String { logLines.text }
}

/// When a callback was called.
final class CallTimes: Sendable {
    private let times = Mutex<[ContinuousClock.Instant]>([])
    var all: [ContinuousClock.Instant] { times.withLock { $0 } }
    func add() { times.withLock { $0.append(.now) } }
}

/// Answers lines by their first word: `hold` waits until `release()`; `hand` too, but as a
/// send is handled (it suspends in its handling, as a send does for its hop to the outbox,
/// and joins a batch); `until-held N` waits in its handling (up to 60 s) until N requests are held;
/// `watch` subscribes the connection to events, `big` answers 64 KiB, `now` is answered on the loop at once
/// (`immediateReply`; `now big` with 4 KiB), anything else is echoed.
final class ScriptedHandler: RequestHandler {
    private struct State {
        var released = false
        var waiting: [(text: String, waiter: CheckedContinuation<Void, Never>)] = []
        /// Released by name before they were held.
        var releasedAhead: Set<String> = []
        var held = 0
        var mostHeld = 0
        var handled = 0
        /// Held requests released one at a time so far (`release(_:)`).
        var releasedOneByOne = 0
        /// For each `hold` handled, in order: how many had been released one at a time then.
        var arrivals: [Int] = []
        /// "handled hand N" and "waiting hand N", in the order they happened.
        var steps: [String] = []
    }
    private let state = Mutex(State())

    var handled: Int { state.withLock { $0.handled } }
    var held: Int { state.withLock { $0.held } }
    var mostHeldAtOnce: Int { state.withLock { $0.mostHeld } }
    var arrivals: [Int] { state.withLock { $0.arrivals } }
    var steps: [String] { state.withLock { $0.steps } }

    /// Answers the held request whose line is `text`, and only it (at once if it is not
    /// held yet).
    func release(_ text: String) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.releasedOneByOne += 1
            guard let index = state.waiting.firstIndex(where: { $0.text == text }) else {
                state.releasedAhead.insert(text)
                return nil
            }
            state.held -= 1
            return state.waiting.remove(at: index).waiter
        }
        waiter?.resume()
    }

    func release() {
        let waiting = state.withLock { state in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for (_, waiter) in waiting { waiter.resume() }
    }

    func handle(_ line: [UInt8], from connection: ConnectionHandle) async -> Reply {
        let text = String(decoding: line, as: UTF8.self)
        state.withLock { state in
            state.handled += 1
            if text.hasPrefix("hold ") { state.arrivals.append(state.releasedOneByOne) }
        }
        switch text.split(separator: " ").first {
        case "hold":
            return .later { [self] in
                await hold(text)
                return Self.line(["held": .string(text)])
            }
        case "hand":
            // Long enough for a wait started before it to run first.
            try? await Task.sleep(for: .milliseconds(20))
            state.withLock { $0.steps.append("handled " + text) }
            return .later { [self] in
                state.withLock { $0.steps.append("waiting " + text) }
                await hold(text)
                return Self.line(["held": .string(text)])
            }
        case "until-held":
            let wanted = Int(text.split(separator: " ").last ?? "") ?? 0
            let seen = await eventually(60) { self.held >= wanted }
            return .now(Self.line(["until-held": .string(seen ? "seen" : "timed out")]))
        case "watch":
            connection.server.watch(connection)
            return .now(Self.line(["watching": .bool(true)]))
        case "big":
            return .now(Self.big)
        default:
            return .now(Self.line(["echo": .string(text)]))
        }
    }

    func joinsBatch(_ line: [UInt8]) -> Bool {
        line.starts(with: Array("hand ".utf8))
    }

    func immediateReply(to line: [UInt8], afterRunningCommands: Bool) -> [UInt8]? {
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("now big ") { return Self.line(["now": .string(text + String(repeating: "x", count: 4096))]) }
        return text.hasPrefix("now ") ? Self.line(["now": .string(text)]) : nil
    }

    private func hold(_ text: String) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.released || state.releasedAhead.remove(text) != nil { return true }
                state.waiting.append((text, waiter))
                state.held += 1
                state.mostHeld = max(state.mostHeld, state.held)
                return false
            }
            if resumeNow { waiter.resume() }
        }
    }

    /// Made once: encoding 64 KiB for each of the thousands of `big` a test sends would
    /// keep the pool's threads from every other test.
    static let big = line(["big": .string(String(repeating: "x", count: 64 * 1024))])

    static func line(_ object: [String: JSONValue]) -> [UInt8] {
        Array(try! WireCoding.line(JSONValue.object(object)))
    }
}

/// A client socket with a short send timeout, to find out when the server stops reading.
final class StubbornClient: @unchecked Sendable {
    // Unchecked: used from one thread at a time.
    let fd: Int32

    init(path: String) throws {
        fd = try UnixSocket.connect(path: path)
        var timeout = timeval(tv_sec: 0, tv_usec: 300_000)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Writes `line` until a write makes no progress; returns the lines written.
    func writeUntilBlocked(_ line: String, atMost: Int) -> Int {
        let bytes = Array(line.utf8)
        for count in 0..<atMost {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, sendFlags) }
                if written <= 0 { return count }
                offset += written
            }
        }
        return atMost
    }
}
