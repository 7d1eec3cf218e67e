import NotifyProtocol
import NotifySocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking connection to notifyd, for notifyctl and other programs. One request at a
/// time; events that arrive while waiting for a reply (after `watch`) are kept for
/// `nextEvent`.
///
/// Whatever listens on the socket may not be notifyd, and is not trusted to end a wait:
/// each wait has a deadline however the other end trickles its bytes or streams lines, and
/// what is kept of lines that are not the reply is bounded.
public final class NotifyClient {
    public let socketPath: String
    /// How long a call may take, from sending the request to its reply, and how long
    /// `nextEvent` and `waitForClose` wait; nil waits as long as it takes.
    public var timeout: Double?
    private let fd: Int32
    private let reader: LineReader
    private var nextID = 1
    private var pendingEvents: [[UInt8]] = []
    private var pendingEventBytes = 0
    /// Until the first answer, a closed connection means notifyd could not serve at all.
    private var answered = false
    /// Whether `call` also returns the result as untyped JSON. Decoding it a second time
    /// is a third of what `notifyctl status` spends, so callers that never show it say so.
    public var keepsRawResult = true

    static let maximumLineLength = 16 * 1024 * 1024
    /// Events read while a reply is awaited, kept for `nextEvent`; far beyond what notifyd
    /// lets wait for a watcher (256 KiB).
    static let maximumPendingEventBytes = 16 * 1024 * 1024

    /// Connects; `timeout` bounds the connect and each call (see `timeout`).
    public init(socketPath: String, timeout: Double? = 30) throws(ClientError) {
        self.socketPath = socketPath
        self.timeout = timeout
        // A local until it is known to be kept: once `self.fd` is set, `deinit` runs even
        // if `init` throws, and would close the descriptor a second time.
        let fd: Int32
        do {
            fd = try UnixSocket.connect(path: socketPath, timeout: timeout)
        } catch {
            switch error.kind {
            case .notRunning: throw .notRunning(path: socketPath, detail: "no notifyd is listening there")
            default: throw .notRunning(path: socketPath, detail: error.message)
            }
        }
        // Whoever listens gets what is sent, the password of `login` included: talk only to
        // a notifyd of this user (or root's), however the socket file came to be there.
        let owner = UnixSocket.peerUID(fd)
        guard let owner, TrustedUser.includes(owner) else {
            close(fd)
            let who = owner.map { "uid \($0)" } ?? "a process whose uid the system does not tell"
            throw .notRunning(path: socketPath, detail: "it is served by \(who), not by you (uid \(currentUID())); refusing to talk to it. Check the socket path, or remove the file and start notifyd again")
        }
        self.fd = fd
        reader = LineReader(fd: fd, maximumLength: Self.maximumLineLength)
    }

    deinit {
        close(fd)
    }

    /// Sends `command` and returns its result, plus the result exactly as the daemon sent
    /// it (with fields this client may not know) for `--json`.
    public func call<Command: NotifyCommand>(_ command: Command) throws(ClientError) -> (Command.Result, raw: JSONValue) {
        let deadline = self.deadline()
        let number = nextID
        nextID += 1
        let id = JSONValue.number(Double(number))
        var line: [UInt8]
        if let plain = command.plainRequestLine(id: number) {
            line = plain
        } else {
            do {
                line = JSONTextWriter.line(try JSONValueEncoder().encode(Request(id: id, command: command)))
            } catch {
                throw .protocolViolation("cannot encode the request: \(error)")
            }
        }
        line.append(0x0A)
        do {
            try write(line, deadline: deadline)
        } catch {
            if !answered, let refusal = refusalAlreadySent() { throw .daemon(refusal) }
            throw answered ? error : .closedBeforeAnswer(path: socketPath, detail: Self.detail(error))
        }
        var others = 0
        while true {
            let bytes: [UInt8]
            do {
                bytes = try readLine(deadline: deadline, others: others)
            } catch {
                guard !answered, case .connection(let detail) = error, !detail.hasPrefix(LineReader.timedOut) else { throw error }
                throw .closedBeforeAnswer(path: socketPath, detail: detail)
            }
            answered = true
            guard let (header, json) = Self.incoming(bytes) else {
                throw .protocolViolation("not JSON: \(PrintableText.line(String(decoding: bytes.prefix(100), as: UTF8.self)))")
            }
            if header.event != nil {
                try keep(event: bytes)
                others += 1
                continue
            }
            // A reply without our id is the daemon refusing the line itself (e.g. too long).
            guard header.id == id || header.id == nil else {
                others += 1
                continue
            }
            if header.ok != true {
                throw .daemon(Self.error(in: json) ?? WireError(code: .internalError, message: "notifyd reported an error without details"))
            }
            if let (result, raw) = Self.plainResult(of: json, for: Command.self) {
                return (result, keepsRawResult ? raw : .null)
            }
            do {
                let response = try JSONValueDecoder().decode(Response<Command.Result>.self, from: json)
                guard let result = response.result else { throw ClientError.protocolViolation("a successful reply without a result") }
                return (result, keepsRawResult ? json["result"] ?? .null : .null)
            } catch {
                throw .protocolViolation("the reply to \(Command.name) does not match this notifyctl's protocol (\(error)); is notifyd a different version?")
            }
        }
    }

    /// A line from notifyd, and its header; nil for a line that is not JSON as notifyd
    /// writes it (no key twice, no lone surrogate) or has no header.
    private static func incoming(_ bytes: [UInt8]) -> (header: IncomingLineHeader, json: JSONValue)? {
        guard (try? JSONShape.check(bytes)) != nil, let json = JSONValue(parsing: bytes), let header = IncomingLineHeader(json: json) else { return nil }
        return (header, json)
    }

    /// The result of a successful reply, and the result as sent, where the command reads it
    /// straight from the JSON value (`send`, `ping`: without the Codable machinery, which a
    /// command that runs once pays for at its first use); nil leaves it to `JSONValueDecoder`,
    /// which also refuses a reply whose `error` is not an error.
    private static func plainResult<Command: NotifyCommand>(of json: JSONValue, for command: Command.Type) -> (Command.Result, JSONValue)? {
        guard let raw = json["result"], let result = Command.result(json: raw) else { return nil }
        if let error = json["error"], error != .null, WireError(json: error) == nil { return nil }
        return (result, raw)
    }

    /// The error an error reply carries. (`IncomingLineHeader(json:)` and `WireError(json:)`
    /// read all that their `Decodable` conformances read: no decoder behind them.)
    private static func error(in json: JSONValue) -> WireError? {
        json["error"].flatMap(WireError.init(json:))
    }

    /// The next event line, as sent, after `watch`. Blocks until one arrives, or `timeout`.
    public func nextEvent() throws(ClientError) -> [UInt8] {
        if !pendingEvents.isEmpty {
            pendingEventBytes -= pendingEvents[0].count
            return pendingEvents.removeFirst()
        }
        let deadline = self.deadline()
        while true {
            let bytes = try readLine(deadline: deadline)
            if let (header, _) = Self.incoming(bytes), header.event != nil { return bytes }
        }
    }

    /// Waits until notifyd closes the connection (after `stop`); throws if it does not
    /// within `timeout`.
    public func waitForClose() throws(ClientError) {
        let deadline = self.deadline()
        while true {
            switch reader.next(deadline: deadline) {
            case .end: return
            case .failed(let reason) where reason == LineReader.timedOut: throw .connection(timedOut(others: 0))
            case .failed: return
            case .line, .tooLong: continue
            }
        }
    }

    private static func detail(_ error: ClientError) -> String {
        if case .connection(let detail) = error { return detail }
        return error.description
    }

    private func write(_ bytes: [UInt8], deadline: Double?) throws(ClientError) {
        do {
            try UnixSocket.writeAll(fd, bytes, deadline: deadline)
        } catch {
            throw .connection(error.message)
        }
    }

    /// A notifyd that cannot serve (a configuration it cannot use, under socket activation)
    /// answers each waiting connection and closes it without waiting for its request: the
    /// request's write then fails, but the reason is already waiting to be read.
    private func refusalAlreadySent() -> WireError? {
        guard case .line(let bytes) = reader.next(deadline: monotonicSeconds() + 0.05), let (_, json) = Self.incoming(bytes) else { return nil }
        return Self.error(in: json)
    }

    private func deadline() -> Double? {
        timeout.map { monotonicSeconds() + $0 }
    }

    /// Keeps an event for `nextEvent`, up to a bound: a listener streaming them must not
    /// fill the memory before the deadline.
    private func keep(event bytes: [UInt8]) throws(ClientError) {
        guard pendingEventBytes + bytes.count <= Self.maximumPendingEventBytes else {
            throw .protocolViolation("more than \(Self.maximumPendingEventBytes / 1024 / 1024) MiB of events arrived while waiting for a reply; is this notifyd?")
        }
        pendingEvents.append(bytes)
        pendingEventBytes += bytes.count
    }

    /// `others`: lines read meanwhile that were not the one awaited.
    private func readLine(deadline: Double?, others: Int = 0) throws(ClientError) -> [UInt8] {
        switch reader.next(deadline: deadline) {
        case .line(let bytes): return bytes
        case .tooLong: throw .protocolViolation("a reply line too long to read")
        case .end: throw .connection("notifyd closed the connection")
        case .failed(let reason) where reason == LineReader.timedOut: throw .connection(timedOut(others: others))
        case .failed(let reason): throw .connection(reason)
        }
    }

    private func timedOut(others: Int) -> String {
        let limit = timeout.map { $0 == $0.rounded() && $0 < 1e9 ? " (\(Int($0)) s)" : " (\($0) s)" } ?? ""
        let meanwhile = others > 0 ? "; \(others) other lines came meanwhile, none of them the answer (is it notifyd that listens there?)" : ""
        return LineReader.timedOut + limit + meanwhile
    }
}
