@testable import NotifyDaemon
import Testing

/// Which requests let the waits of the sends before them start after them (see
/// `RequestHandler.joinsBatch`): only a `send` that queues, whose handling returns at once.
@Suite struct BatchJoiningTests {
    @Test(arguments: [
        (#"{"cmd":"send","to":"bob","message":"hi"}"#, true),
        // The text in a string is escaped: only the key, or a value that is exactly the
        // word (a recipient named so, then not batched), is taken for it.
        (#"{"id":7,"message":"say \"queue\" ","cmd":"send","to":"bob"}"#, true),
        (#"{"cmd":"send","to":"queue","message":"hi"}"#, false),
        (#"{"cmd":"send","to":"bob","message":"hi","wait":true}"#, true),
        (#"{"cmd":"send","to":"bob","message":"hi","queue":false}"#, false),
        (#"{"cmd":"send","to":"bob","message":"hi","queue":true}"#, false),
        (#"{"cmd":"logout"}"#, false),
        (#"{"cmd":"status"}"#, false),
        (#"{"cmd":"sen"#, false),
        ("not json", false),
    ])
    func onlyASendThatQueuesJoins(line: String, joins: Bool) {
        #expect(CommandRouter.joinsBatch(Array(line.utf8)) == joins, "\(line)")
    }
}
