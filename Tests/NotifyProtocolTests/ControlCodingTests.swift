import Foundation
import NotifyProtocol
import Testing

/// The wire form of `stop`, `reload`, the outbox commands, the outbox summary and the
/// shutdown event.
struct ControlCodingTests {
    @Test func outboxCommandsNameTheDeliveryNotTheRequestId() throws {
        #expect(try WireText.encode(Request(id: .number(3), command: OutboxCancelCommand(delivery: "0000000013-fcm")))
                == #"{"cmd":"outbox-cancel","delivery":"0000000013-fcm","id":3}"#)
        #expect(try WireText.encode(Request(id: .number(4), command: OutboxRetryCommand())) == #"{"cmd":"outbox-retry","id":4}"#)
        #expect(try WireText.encode(Request(id: nil, command: StopCommand())) == #"{"cmd":"stop"}"#)
        #expect(try WireText.encode(Request(id: nil, command: ReloadCommand())) == #"{"cmd":"reload"}"#)
    }

    @Test func reloadResultAndOutboxSummaryUseSnakeCase() throws {
        let reload = ReloadResult(config: "/c", applied: ["log_level"], restartNeeded: ["backend"], problems: [])
        #expect(try WireText.encode(reload) == #"{"applied":["log_level"],"config":"/c","problems":[],"restart_needed":["backend"]}"#)
        let summary = OutboxSummary(waiting: 2, held: 0, failed: 1, nextAttemptAt: try WireText.date("2026-01-02T03:04:05Z"))
        #expect(try WireText.encode(summary) == #"{"failed":1,"held":0,"next_attempt_at":"2026-01-02T03:04:05Z","waiting":2}"#)
        #expect(try WireText.decode(OutboxSummary.self, WireText.encode(summary)) == summary)
    }

    @Test func statusFromADaemonWithoutAnOutboxSummaryStillDecodes() throws {
        let text = #"{"daemon":{"version":"0.1","protocol":1,"pid":1,"socket":"/s","state_directory":"/d","started_at":"2026-01-01T00:00:00Z"},"device":{"platform":"apns","tags":[]},"registration":{"state":"no_token","failures":0}}"#
        #expect(try WireText.decode(StatusResult.self, text).outbox == nil)
    }

    @Test func theShutdownEventIsAnEventLine() throws {
        let text = try WireText.encode(ShutdownEvent(time: try WireText.date("2026-01-02T03:04:05Z")))
        #expect(text == #"{"event":"shutdown","time":"2026-01-02T03:04:05Z"}"#)
        #expect(try WireText.decode(IncomingLineHeader.self, text).event == EventName.shutdown)
    }
}
