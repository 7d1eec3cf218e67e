import Foundation
import NotifyTestSupport
import Testing

/// The built notifyctl against a listener that is not notifyd: each command answers or
/// fails within its own timeout however the other end behaves, and nothing it prints from
/// the socket reaches the terminal with its control characters intact.
@Suite struct HostileListenerTests {
    /// Far beyond any timeout of the commands run here (5 s at most): only a notifyctl that
    /// never ends reaches it, and is then killed.
    static let hangs = 120.0

    /// Escape sequences that retitle the terminal, clear it and colour it; C1's CSI, raw
    /// and in UTF-8; DEL, a carriage return, a line separator, NUL.
    static let escapes = Array("\u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}[31m red \u{9B}5m \u{7F} \r over \u{2028} \u{0}".utf8) + [0x9B, 0x1B]

    enum Listener: String, CaseIterable, CustomTestStringConvertible {
        case streamsEvents, streamsEventsSlowly, garbageThenAnEndlessLine, anEndlessLine, tricklesBytes, neverAnswers, acceptsNothing

        var testDescription: String { rawValue }
        var accepts: Bool { self != .acceptsNothing }

        var serve: @Sendable (Int32) -> Void {
            switch self {
            case .streamsEvents: HostileListener.repeating(Array("{\"event\":\"x\"}\n".utf8))
            case .streamsEventsSlowly: HostileListener.slowly("{\"event\":\"x\"}")
            case .garbageThenAnEndlessLine: HostileListener.starting(with: escapes + [0x0A], then: HostileListener.repeating(escapes))
            case .anEndlessLine: HostileListener.repeating(escapes)
            case .tricklesBytes: HostileListener.trickling(escapes)
            case .neverAnswers, .acceptsNothing: HostileListener.silent
            }
        }
    }

    static let commands: [[String]] = [["ping"], ["--json", "ping"], ["status"], ["watch"], ["stop", "--timeout", "1"]]

    /// The one deadline of each command for everything it waits for (README, "Use"; notifyctl(1)).
    static func deadline(_ arguments: [String]) -> Double {
        arguments.first == "stop" ? 1 : 5
    }

    /// What a busy machine may add to a deadline before notifyctl has ended and been
    /// reaped: far less than a deadline started again at each line would take (forever,
    /// for a stream) and far more than scheduling delays.
    static let slack = 10.0

    /// `stop` takes a socket nobody accepts on for a notifyd that is not running, and says
    /// so with exit 0; every other pair must fail.
    static let pairs: [(Listener, [String])] = Listener.allCases.flatMap { listener in
        commands.filter { listener.accepts || $0.first != "stop" }.map { (listener, $0) }
    }

    @Test(arguments: pairs)
    func everyCommandEndsWithAnErrorAndPrintsNoControlCharacter(listener: Listener, arguments: [String]) async throws {
        try await HostileListener.with(accepting: listener.accepts, serve: listener.serve) { socket in
            // Timed on a thread of its own, from the spawn to the exit, so that the test's own
            // wait for the concurrency pool is not counted.
            let (notifyctl, status, took) = try await offThePool { () -> (SpawnedProcess, Int32, Double) in
                let started = ContinuousClock.now
                let notifyctl = try SpawnedProcess(BuiltProducts.path("notifyctl"), ["--socket", socket.path] + arguments)
                let status = notifyctl.waitBlocking(seconds: Self.hangs)
                return (notifyctl, status, (ContinuousClock.now - started) / .seconds(1))
            }
            let output = notifyctl.standardOutputBytes, error = notifyctl.standardErrorBytes
            #expect(status == 1 || status == 3, "exit \(status) (137: killed, it never ended): \(notifyctl.standardError)")
            #expect(took < Self.deadline(arguments) + Self.slack, "took \(took) s with a deadline of \(Self.deadline(arguments)) s")
            #expect(Self.controls(in: output) == [], "\(notifyctl.standardOutput)")
            #expect(Self.controls(in: error) == [], "\(notifyctl.standardError)")
            if arguments.contains("--json") {
                let object = try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any]
                #expect((object?["error"] as? [String: Any])?["message"] is String, "\(notifyctl.standardOutput)")
            } else {
                #expect(notifyctl.standardError.hasPrefix("notifyctl: "), "says what failed")
            }
        }
    }

    /// A listener that answers like notifyd, with fields made to forge lines and drive the
    /// terminal: they are shown on their lines, escaped, and `--json` and `watch` print
    /// JSON that still means exactly what was sent.
    static var registration: [String: Any] { ["state": "retrying", "failures": 1, "id": "\u{1B}]0;owned\u{07}", "message": "fine\nregistration: registered"] }
    static var status: [String: Any] { [
        "daemon": ["version": "1\u{1B}[2J", "protocol": 1, "pid": 1, "socket": "/s\u{9B}1m", "state_directory": "/x", "started_at": "2026-01-01T00:00:00Z"],
        "backend": "http://b\r\nnotifyd:      forged",
        "account": ["user": "alice\u{7F}", "password_source": "file"],
        "device": ["token": "AB\u{2028}CD", "platform": "apns", "tags": ["t\u{1B}c"]],
        "registration": registration,
    ] }
    static var event: [String: Any] { ["event": "registration", "registration": ["state": "retrying", "message": "C1 \u{9B}2J DEL \u{7F} LS \u{2028}"]] }

    static func json(_ value: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]), as: UTF8.self)
    }

    static let lookalike = HostileListener.answering(events: [json(event), "{\"event\":\"send\",\t\"x\":1}\r"]) { command, id in
        switch command {
        case "ping": "{\"id\":\(id),\"ok\":true,\"result\":{\"version\":\(json("1.0\u{1B}]0;owned\u{07}\nnotifyd 9.9")),\"protocol\":1,\"pid\":1}}"
        case "status": "{\"id\":\(id),\"ok\":true,\"result\":\(json(status))}"
        case "watch": "{\"id\":\(id),\"ok\":true,\"result\":\(json(["registration": registration]))}"
        default: "{\"id\":\(id),\"ok\":false,\"error\":{\"code\":\"internal_error\",\"message\":\(json("bad\nnotifyctl: forged\u{1B}[2J"))}}"
        }
    }

    @Test(arguments: [["status"], ["ping"], ["reload"], ["watch"], ["--json", "status"], ["--json", "watch"]])
    func fieldsFromTheSocketAreShownEscapedOnTheirLines(arguments: [String]) async throws {
        try await HostileListener.with(serve: Self.lookalike) { socket in
            let notifyctl = try await SpawnedProcess.start(BuiltProducts.path("notifyctl"), ["--socket", socket.path] + arguments)
            let status = await notifyctl.wait(seconds: Self.hangs)
            let output = notifyctl.standardOutputBytes, error = notifyctl.standardErrorBytes
            #expect(status != 137, "it never ended")
            #expect(Self.controls(in: output) == [], "\(notifyctl.standardOutput)")
            #expect(Self.controls(in: error) == [], "\(notifyctl.standardError)")
            let lines = (notifyctl.standardOutput + notifyctl.standardError).split(separator: "\n")
            for forged in ["registration: registered", "notifyd:      forged", "notifyd 9.9", "notifyctl: forged"] {
                #expect(!lines.contains { $0.hasPrefix(forged) }, "a line of its own: \(forged)")
            }
            switch arguments {
            case ["status"]:
                #expect(notifyctl.standardOutput.contains(#"(id \u001B]0;owned\u0007)"#), "\(notifyctl.standardOutput)")
                #expect(notifyctl.standardOutput.contains(#"fine\nregistration: registered"#))
            case ["--json", "status"]:
                let object = try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any]
                #expect((object?["registration"] as? [String: Any])?["id"] as? String == "\u{1B}]0;owned\u{07}", "the same id, escaped")
                #expect((object?["account"] as? [String: Any])?["user"] as? String == "alice\u{7F}")
            case ["watch"]:
                #expect(status == 1, "the connection ended without a shutdown event")
                let printed = notifyctl.standardOutput.split(separator: "\n")
                // The reply and both events, each on its line; an event not as notifyd sends
                // them is shown by its name and fields, escaped, not dropped.
                #expect(printed.count == 3 && printed[0].contains("  registration: ") && printed[1].contains(#"\u009B2J"#),
                        "one line per event: \(notifyctl.standardOutput)")
            case ["--json", "watch"]:
                #expect(status == 1, "the connection ended without a shutdown event")
                // With --json, the error at the end is a JSON line too.
                let printed = try lines.filter { $0.hasPrefix("{") && !$0.hasPrefix("{\"error\"") }.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                #expect(printed.count == 3, "the reply and both events: \(notifyctl.standardOutput)")
                #expect(((printed.dropFirst().first as? [String: Any])?["registration"] as? [String: Any])?["message"] as? String == "C1 \u{9B}2J DEL \u{7F} LS \u{2028}")
            default:
                #expect(status == 1 || arguments == ["ping"], "\(notifyctl.standardError)")
            }
        }
    }

    /// What a terminal would act on: a C0 control but the newline, DEL, C1, the line and
    /// paragraph separators, and bytes that are not UTF-8 at all (a raw C1 byte).
    static func controls(in bytes: [UInt8]) -> [String] {
        guard let text = String(validating: bytes, as: UTF8.self) else { return ["bytes that are not UTF-8"] }
        return text.unicodeScalars.filter { scalar in
            (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
        }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
    }
}
