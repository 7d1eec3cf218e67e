import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// How many connections a burst of sends opens to the backend: several, side by side, and
/// never more than `max_connections`.
@Suite(.stopsFixtures) struct BackendConnectionTests {
    @Test(arguments: [2, 5])
    func aBurstGoesSideBySideOnAtMostMaxConnections(limit: Int) async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.maxConnections = limit })
        _ = try await fixture.login()
        // Six sends in one write, accepted in one or a few batches; the backend holds each
        // a while, so those under way pile up.
        try fixture.backend.addFault(.init(route: .send, delay: 1.5))
        let connection = try RawConnection(path: fixture.socketPath)
        try connection.send((1...6).map { #"{"cmd":"send","to":"user\#($0)","message":"hi"}"# + "\n" }.joined())
        let replies = try await onThread { (1...6).map { _ in connection.receive() } }
        #expect(replies.map { $0?["ok"] } == Array(repeating: .bool(true), count: 6), "\(replies)")
        #expect(fixture.backend.pushes().count == 6)
        // Each connection is kept alive for the next request, so those opened in all are at
        // least those open at once: more than max_connections would be a broken bound, one
        // would mean one send after another. (Exactly the limit is usual, but on a loaded
        // machine a later batch may start after an earlier request has ended.)
        let opened = fixture.backend.acceptedConnections
        #expect(opened <= limit, "\(opened) connections with max_connections \(limit)")
        #expect(opened >= 2, "\(opened) connection: the sends went one after another")
    }

    /// The backend closed the connections kept alive from a burst, and libcurl takes them
    /// for live ones (here each is closed at its next request, unanswered; over TLS a
    /// close_notify it has not read does the same): libcurl tries six and gives up. The
    /// send then goes again at once on a new connection instead of waiting out its backoff
    /// (an hour here).
    @Test func aSendOnConnectionsTheBackendClosedGoesAgainOnANewOne() async throws {
        let fixture = try await DaemonFixture(settings: .fast {
            $0.maxConnections = 8
            $0.retry = Backoff(initial: 3600, maximum: 3600)
        })
        _ = try await fixture.login()
        // Eight sends held side by side open eight connections, kept alive afterwards.
        try fixture.backend.addFault(.init(route: .send, delay: 1, count: 8))
        let connection = try RawConnection(path: fixture.socketPath)
        try connection.send((1...8).map { #"{"cmd":"send","to":"user\#($0)","message":"hi"}"# + "\n" }.joined())
        let replies = try await onThread { (1...8).map { _ in connection.receive() } }
        #expect(replies.map { $0?["ok"] } == Array(repeating: .bool(true), count: 8), "\(replies)")
        let opened = fixture.backend.acceptedConnections
        try #require(opened >= 6, "\(opened) connections kept alive: too few for libcurl to give up on them")

        try fixture.backend.addFault(.init(route: .send, drop: true, count: 6))
        let sent = try await fixture.call(SendCommand(to: "bob", message: "after the close"))
        #expect(sent.deliveries.first?.state == .delivered, "\(sent)")
        #expect(fixture.backend.acceptedConnections == opened + 1, "one new connection")
    }
}
