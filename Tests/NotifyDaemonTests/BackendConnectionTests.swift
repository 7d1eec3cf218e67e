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
        // The backend holds every send a while, long enough for the others to pile up.
        try fixture.backend.addFault(.init(route: .send, delay: 0.8))
        let states = try await withThrowingTaskGroup(of: DeliveryState?.self) { group in
            for recipient in 1...6 {
                group.addTask { try await fixture.call(SendCommand(to: "user\(recipient)", message: "hi")).deliveries.first?.state }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(states == Array(repeating: .delivered, count: 6))
        // Each connection is kept alive for the next request, so those opened in all are
        // those open at once: fewer would mean one after another, more a broken bound.
        #expect(fixture.backend.acceptedConnections == limit, "\(fixture.backend.acceptedConnections) connections with max_connections \(limit)")
    }
}
