import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd sending to more recipients than it has connections: the recipients
/// take turns, oldest message first, so none waits for the others' whole queues.
@Suite struct RecipientTurnsTests {
    @Test func moreRecipientsThanConnectionsTakeTurns() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("max_connections = 2\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--config", config])
        try await daemon.logIn("alice")
        // Each send held at the backend: the burst's requests overlap for certain, and the
        // recipients' lanes would fill with their next messages.
        try backend.addFault(.init(route: .send, delay: 0.2))

        let recipients = ["ann", "ben", "cat"], rounds = 8
        let lines = (0..<rounds * recipients.count).map { index in
            #"{"id":\#(index),"cmd":"send","to":"\#(recipients[index % recipients.count])","message":"round \#(index / recipients.count)"}"#
        }
        let replies = try await daemon.exchange(lines)
        #expect(replies.count == lines.count && replies.allSatisfy { $0.contains(#""state":"delivered""#) }, "\(replies)")

        let arrivals = backend.pushes().map { push in "\(push.toTag) \((0..<rounds).first { push.payload.contains("round \($0)") } ?? -1)" }
        func arrival(_ recipient: String, _ round: Int) -> Int { arrivals.firstIndex(of: "\(recipient) \(round)") ?? Int.max }
        // Two places for three recipients: cat gets one after ann's or ben's turn, long
        // before either has sent all its messages.
        #expect(arrival("cat", 0) < arrival("ann", rounds - 1) && arrival("cat", 0) < arrival("ben", rounds - 1), "arrivals: \(arrivals)")
        // And each recipient's messages in the order sent.
        for recipient in recipients {
            #expect((0..<rounds).map { arrival(recipient, $0) } == (0..<rounds).map { arrival(recipient, $0) }.sorted(), "arrivals: \(arrivals)")
        }
        await daemon.cleanUp()
    }
}
