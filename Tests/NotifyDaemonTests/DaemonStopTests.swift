import Foundation
@testable import NotifyCore
@testable import NotifyDaemon
import NotifyProtocol
import NotifyTestSupport
import Synchronization
import Testing

/// `Daemon.stop` ends what the daemon started, as a service group does: the requests
/// being handled and the recovery's wakes are waited for (or cancelled), and none starts
/// after it returned.
@Suite(.stopsFixtures) struct DaemonStopTests {
    @Test func aStoppedDaemonStartsNoRequestAndNoWake() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        let server = try #require(fixture.daemon.server.withLock { $0 })
        await fixture.daemon.stop()
        #expect(server.requestsUnderWay.count == 0, "a request outlived the stop")
        #expect(!server.requestsUnderWay.start {}, "a request could still start")

        let wakes = Atomic<Int>(0)
        fixture.daemon.recovery.attach(.outbox, wake: { _ in wakes.add(1, ordering: .relaxed) })
        fixture.daemon.recovery.setWaiting(.outbox, true)
        let started = fixture.daemon.recovery.wakes.started
        fixture.daemon.recovery.backendAnswered(fixture.backend.baseURL.absoluteString)
        // A wake starts within backendAnswered or not at all.
        #expect(fixture.daemon.recovery.wakes.started == started, "the recovery started a wake after the stop")
        #expect(wakes.load(ordering: .relaxed) == 0, "the recovery woke a part after the stop")
    }
}
