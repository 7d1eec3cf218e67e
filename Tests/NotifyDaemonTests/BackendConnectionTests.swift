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
        // The backend holds every send a while, so the requests under way pile up.
        try fixture.backend.addFault(.init(route: .send, delay: 0.4))
        let port = try #require(fixture.backend.baseURL.port)

        let burst = Task {
            try await withThrowingTaskGroup(of: DeliveryState?.self) { group in
                for recipient in 1...8 {
                    group.addTask { try await fixture.call(SendCommand(to: "user\(recipient)", message: "hi")).deliveries.first?.state }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        var most = 0
        while fixture.backend.pushes().count < 8 {
            most = max(most, Self.connectionsAccepted(onPort: port))
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await burst.value == Array(repeating: .delivered, count: 8))
        #expect(most == limit, "\(most) connections at once with max_connections \(limit)")
    }

    /// Open TCP connections whose local end is `port` on this machine: the backend's side
    /// of each connection a client holds to it.
    static func connectionsAccepted(onPort port: Int) -> Int {
        ["/proc/net/tcp", "/proc/net/tcp6"].reduce(0) { count, table in
            let rows = ((try? String(contentsOfFile: table, encoding: .utf8)) ?? "").split(separator: "\n").dropFirst()
            return count + rows.filter { row in
                let fields = row.split(separator: " ")
                // local_address is ADDRESS:PORT in hex; state 01 is ESTABLISHED.
                guard fields.count > 3, let local = fields[1].split(separator: ":").last else { return false }
                return Int(local, radix: 16) == port && fields[3] == "01"
            }.count
        }
    }
}
