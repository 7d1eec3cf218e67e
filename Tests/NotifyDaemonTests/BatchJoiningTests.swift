@testable import NotifyDaemon
import Testing

/// Which requests let the waits of the sends before them start after them (see
/// `RequestHandler.joinsBatch`): only a `send` that queues, whose handling returns at once.
/// Decided from the command read, whatever words its text holds.
@Suite struct BatchJoiningTests {
    @Test(arguments: [
        (#"{"cmd":"send","to":"bob","message":"hi"}"#, true),
        (#"{"id":7,"message":"say \"queue\" ","cmd":"send","to":"bob"}"#, true),
        // The word in a message or a recipient is text like any other.
        (#"{"cmd":"send","to":"bob","message":"queue"}"#, true),
        (#"{"cmd":"send","to":"queue","message":"hi"}"#, true),
        (#"{"cmd":"send","to":"bob","message":"the \"queue\":false\n"}"#, true),
        (#"{"cmd":"send","to":"bob","message":"hi","wait":true}"#, true),
        (#"{"cmd":"send","to":"bob","message":"hi","queue":true}"#, true),
        (#"{"cmd":"send","to":"bob","message":"hi","queue":null}"#, true),
        // Escaped, so read by the decoder rather than plainly: the same.
        (#"{"cmd":"s\u0065nd","to":"bob","message":"hi"}"#, true),
        // One that does not queue waits for the backend in its handling.
        (#"{"cmd":"send","to":"bob","message":"hi","queue":false}"#, false),
        (#"{"cmd":"send","to":"bob","message":"a\nb","queue":false}"#, false),
        // Answered already: nothing to join.
        (#"{"cmd":"send","to":"bob","message":42}"#, false),
        (#"{"cmd":"logout"}"#, false),
        (#"{"cmd":"status"}"#, false),
        (#"{"cmd":"queue"}"#, false),
        (#"{"cmd":"sen"#, false),
        ("not json", false),
    ])
    func onlyASendThatQueuesJoins(line: String, joins: Bool) {
        #expect(CommandRouter.read(Array(line.utf8)).joinsBatch == joins, "\(line)")
    }
}
