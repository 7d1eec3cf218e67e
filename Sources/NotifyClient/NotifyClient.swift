#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
public final class NotifyClient {
    public let socketPath: String
    private let fd: Int32
    private let reader: LineReader
    private var nextID = 1
    private var pendingEvents: [[UInt8]] = []
    /// Until the first answer, a closed connection means notifyd could not serve at all.
    private var answered = false
    /// Whether `call` also returns the result as untyped JSON. Decoding it a second time
    /// is a third of what `notifyctl status` spends, so callers that never show it say so.
    public var keepsRawResult = true

    /// Connects; `timeout` bounds each wait for a reply (nil waits as long as it takes).
    public init(socketPath: String, timeout: Double? = 30) throws(ClientError) {
        self.socketPath = socketPath
        // A local until it is known to be kept: once `self.fd` is set, `deinit` runs even
        // if `init` throws, and would close the descriptor a second time.
        let fd: Int32
        do {
            fd = try UnixSocket.connect(path: socketPath)
        } catch {
            switch error.kind {
            case .notRunning: throw .notRunning(path: socketPath, detail: "no notifyd is listening there")
            default: throw .notRunning(path: socketPath, detail: error.message)
            }
        }
        // Whoever listens gets what is sent, the password of `login` included: talk only to
        // a notifyd of this user (or root's), however the socket file came to be there.
        let owner = UnixSocket.peerUID(fd)
        guard let owner, owner == currentUID() || owner == 0 else {
            close(fd)
            let who = owner.map { "uid \($0)" } ?? "a process whose uid the system does not tell"
            throw .notRunning(path: socketPath, detail: "it is served by \(who), not by you (uid \(currentUID())); refusing to talk to it. Check the socket path, or remove the file and start notifyd again")
        }
        if let timeout { UnixSocket.setReceiveTimeout(fd, seconds: timeout) }
        self.fd = fd
        reader = LineReader(fd: fd, maximumLength: 16 * 1024 * 1024)
    }

    deinit {
        close(fd)
    }

    /// Sends `command` and returns its result, plus the result exactly as the daemon sent
    /// it (with fields this client may not know) for `--json`.
    public func call<Command: NotifyCommand>(_ command: Command) throws(ClientError) -> (Command.Result, raw: JSONValue) {
        let id = JSONValue.number(Double(nextID))
        nextID += 1
        let line: Data
        do {
            line = try WireCoding.line(Request(id: id, command: command))
        } catch {
            throw .protocolViolation("cannot encode the request: \(error)")
        }
        do {
            try write(Array(line))
        } catch {
            throw answered ? error : .closedBeforeAnswer(path: socketPath, detail: Self.detail(error))
        }
        while true {
            let bytes: [UInt8]
            do {
                bytes = try readLine()
            } catch {
                guard !answered, case .connection(let detail) = error, !detail.hasPrefix("timed out") else { throw error }
                throw .closedBeforeAnswer(path: socketPath, detail: detail)
            }
            answered = true
            let data = Data(bytes)
            let decoder = WireCoding.decoder()
            guard (try? JSONShape.check(bytes)) != nil, let header = try? decoder.decode(IncomingLineHeader.self, from: data) else {
                throw .protocolViolation("not JSON: \(PrintableText.line(String(decoding: bytes.prefix(100), as: UTF8.self)))")
            }
            if header.event != nil {
                pendingEvents.append(bytes)
                continue
            }
            // A reply without our id is the daemon refusing the line itself (e.g. too long).
            guard header.id == id || header.id == nil else { continue }
            if header.ok != true {
                let raw = try? decoder.decode(Response<JSONValue>.self, from: data)
                throw .daemon(raw?.error ?? WireError(code: .internalError, message: "notifyd reported an error without details"))
            }
            do {
                let response = try decoder.decode(Response<Command.Result>.self, from: data)
                guard let result = response.result else { throw ClientError.protocolViolation("a successful reply without a result") }
                let raw = keepsRawResult ? (try? decoder.decode(Response<JSONValue>.self, from: data))?.result : nil
                return (result, raw ?? .null)
            } catch {
                throw .protocolViolation("the reply to \(Command.name) does not match this notifyctl's protocol (\(error)); is notifyd a different version?")
            }
        }
    }

    /// The next event line, as sent, after `watch`. Blocks until one arrives.
    public func nextEvent() throws(ClientError) -> [UInt8] {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        while true {
            let bytes = try readLine()
            if (try? JSONShape.check(bytes)) != nil,
               let header = try? WireCoding.decoder().decode(IncomingLineHeader.self, from: Data(bytes)), header.event != nil {
                return bytes
            }
        }
    }

    /// Waits until notifyd closes the connection (after `stop`); throws if it does not
    /// within the receive timeout.
    public func waitForClose() throws(ClientError) {
        while true {
            switch reader.next() {
            case .end: return
            case .failed(let reason) where reason.hasPrefix("timed out"): throw .connection(reason)
            case .failed: return
            case .line, .tooLong: continue
            }
        }
    }

    private static func detail(_ error: ClientError) -> String {
        if case .connection(let detail) = error { return detail }
        return error.description
    }

    private func write(_ bytes: [UInt8]) throws(ClientError) {
        do {
            try UnixSocket.writeAll(fd, bytes)
        } catch {
            throw .connection(error.message)
        }
    }

    private func readLine() throws(ClientError) -> [UInt8] {
        switch reader.next() {
        case .line(let bytes): return bytes
        case .tooLong: throw .protocolViolation("a reply line too long to read")
        case .end: throw .connection("notifyd closed the connection")
        case .failed(let reason): throw .connection(reason)
        }
    }
}
