import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// How many connections a burst of sends opens to the backend: `max_connections` of them,
/// side by side, and never more.
@Suite(.stopsFixtures) struct BackendConnectionTests {
    @Test(arguments: [2, 5])
    func aBurstUsesExactlyMaxConnectionsAtOnce(limit: Int) async throws {
        var outbox = DaemonFixture.fastOutbox
        outbox.concurrency = limit
        let fixture = try await DaemonFixture(outbox: outbox)
        _ = try await fixture.login()
        // Six sends in one write, so they are accepted together and their attempts start
        // together; the backend holds each a while, so none ends before the others begin.
        try fixture.backend.addFault(.init(route: .send, delay: 0.8))
        let connection = try RawConnection(path: fixture.socketPath)
        try connection.send((1...6).map { #"{"cmd":"send","to":"user\#($0)","message":"hi"}"# + "\n" }.joined())
        let replies = try await onThread { (1...6).map { _ in connection.receive() } }
        #expect(replies.map { $0?["ok"] } == Array(repeating: .bool(true), count: 6), "\(replies)")
        #expect(fixture.backend.pushes().count == 6)
        // Each connection is kept alive for the next request, so those opened in all are
        // those open at once: fewer would mean one after another, more a broken bound.
        #expect(fixture.backend.acceptedConnections == limit, "\(fixture.backend.acceptedConnections) connections with max_connections \(limit)")
    }
}
