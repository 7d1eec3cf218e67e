import NotifyCoding
import Foundation
import NotifyClient
import NotifyProtocol
import NotifySocket
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// How the client reads the lines that come back for a call: its reply among events and
/// other replies, errors, and replies it cannot read. A scripted listener plays notifyd.
struct ClientReplyTests {
    static let pingResult = #"{"version":"9.9","protocol":1,"pid":42}"#

    /// A listening socket in a directory of its own, both gone after `body`.
    static func listening(_ body: (_ path: String, _ listener: Int32) throws -> Void) throws {
        let directory = "/tmp/nd-reply-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/s.sock"
        let listener = try UnixSocket.listen(path: path)
        defer { close(listener) }
        try body(path, listener)
    }

    /// Answers the first request on `path` with `lines`, then waits for the client to close.
    static func answering(_ lines: [String], _ body: (String) throws -> Void) throws {
        try listening { path, listener in
            let done = DispatchSemaphore(value: 0)
            Thread {
                defer { done.signal() }
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return }
                defer { close(fd) }
                var byte: UInt8 = 0
                while recv(fd, &byte, 1, 0) == 1 && byte != 0x0A {}
                try? UnixSocket.writeAll(fd, Array(lines.map { $0 + "\n" }.joined().utf8))
                while recv(fd, &byte, 1, 0) > 0 {}
            }.start()
            defer {
                shutdown(listener, Int32(SHUT_RDWR))
                done.wait()
            }
            try body(path)
        }
    }

    @Test func anEventAndAnotherIdsReplyBeforeOursAreSetAsideOrSkipped() throws {
        try Self.answering([
            #"{"event":"registration","time":"2026-01-01T00:00:00Z"}"#,
            #"{"id":99,"ok":true,"result":{"version":"0.0","protocol":1,"pid":1}}"#,
            #"{"id":1,"ok":true,"result":\#(Self.pingResult)}"#,
        ]) { path in
            let client = try NotifyClient(socketPath: path, timeout: 10)
            let (result, _) = try client.call(PingCommand())
            #expect(result.version == "9.9")
            #expect(String(decoding: try client.nextEvent(), as: UTF8.self).contains(#""event":"registration""#))
        }
    }

    /// notifyd refusing to start under socket activation answers a waiting connection and
    /// closes it before the request is written (`PendingClients`): the client's write fails,
    /// and the reason it was sent is what the caller hears.
    @Test func aRefusalSentBeforeTheRequestIsTheDaemonsError() throws {
        try Self.listening { path, listener in
            let client = try NotifyClient(socketPath: path, timeout: 10)
            let fd = accept(listener, nil, nil)
            try UnixSocket.writeAll(fd, Array(#"{"ok":false,"error":{"code":"config_error","message":"fix the config"}}\#n"#.utf8))
            close(fd)
            #expect {
                try client.call(PingCommand())
            } throws: { error in
                guard case .daemon(let wire) = error as? ClientError else { return false }
                return wire.code == .configError && wire.message == "fix the config"
            }
        }
    }

    /// A send's reply is read as Foundation's decoder reads it, a field this client does not
    /// know (here with an exponent) included, and `--json` gets the result as sent.
    @Test(arguments: ["1", "1e3"])
    func aSendReplyIsReadAsTheDecoderReadsIt(later: String) throws {
        let delivery = #"{"attempts":2,"created_at":"2026-11-27T13:23:38Z","error":{"code":"backend_unavailable","message":"HTTP 503"},"#
            + #""id":"0000000400-apns","later":\#(later),"next_attempt_at":"2026-11-27T13:24:08Z","pns":"apns","preview":"h\u00e9","state":"queued","to":"bob"}"#
        try Self.answering([#"{"id":1,"ok":true,"result":{"deliveries":[\#(delivery)]}}"#]) { path in
            let client = try NotifyClient(socketPath: path, timeout: 10)
            client.keepsRawResult = true
            let (result, raw) = try client.call(SendCommand(to: "bob", message: "hé"))
            #expect(result.deliveries == [DeliveryStatus(
                id: "0000000400-apns", to: "bob", pns: "apns", state: .queued, attempts: 2,
                createdAt: Date(timeIntervalSince1970: 1_795_785_818), nextAttemptAt: Date(timeIntervalSince1970: 1_795_785_848),
                error: WireError(code: .backendUnavailable, message: "HTTP 503"), preview: "hé")])
            #expect(raw["deliveries"] == .array([try WireCoding.decoder().decode(JSONValue.self, from: Data(delivery.utf8))]))
        }
    }

    @Test func anErrorReplyIsTheDaemonsError() throws {
        try Self.answering([#"{"id":1,"ok":false,"error":{"code":"not_logged_in","message":"log in first"}}"#]) { path in
            let client = try NotifyClient(socketPath: path, timeout: 10)
            #expect {
                try client.call(PingCommand())
            } throws: { error in
                guard case .daemon(let wire) = error as? ClientError else { return false }
                return wire.code == .notLoggedIn && wire.message == "log in first"
            }
        }
    }

    @Test func aReplyOfAnotherShapeSaysNotifydMayBeAnotherVersion() throws {
        try Self.answering([#"{"id":1,"ok":true,"result":{"version":7}}"#]) { path in
            let client = try NotifyClient(socketPath: path, timeout: 10)
            #expect {
                try client.call(PingCommand())
            } throws: { error in
                guard case .protocolViolation(let text) = error as? ClientError else { return false }
                return text.contains("does not match") && text.contains("different version")
            }
        }
    }

    @Test func aLineThatIsNeitherReplyNorEventIsAProtocolViolation() throws {
        try Self.answering([#"[1,2,3]"#]) { path in
            let client = try NotifyClient(socketPath: path, timeout: 10)
            #expect {
                try client.call(PingCommand())
            } throws: { error in
                guard case .protocolViolation = error as? ClientError else { return false }
                return true
            }
        }
    }

    /// A listener that takes the connection and never reads: a request larger than the
    /// socket's buffers cannot hold the call past its timeout. If it did, the listener
    /// hangs up after a minute, and the call fails with a broken pipe instead.
    @Test func aListenerThatReadsNothingCannotHoldAWrite() async throws {
        let directory = "/tmp/nd-reply-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/s.sock"
        let listener = try UnixSocket.listen(path: path)
        defer { close(listener) }
        let outcome = try await onThread { () -> String in
            let client = try NotifyClient(socketPath: path, timeout: 1)
            let accepted = accept(listener, nil, nil)
            let callEnded = DispatchSemaphore(value: 0), watchdogEnded = DispatchSemaphore(value: 0)
            Thread {
                if callEnded.wait(timeout: .now() + 60) == .timedOut { shutdown(accepted, Int32(SHUT_RDWR)) }
                watchdogEnded.signal()
            }.start()
            defer {
                callEnded.signal()
                watchdogEnded.wait()
                close(accepted)
            }
            do {
                _ = try client.call(SendCommand(to: "bob", message: String(repeating: "x", count: 8 << 20)))
                return "answered"
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome.contains("timed out writing"), "\(outcome)")
    }
}
