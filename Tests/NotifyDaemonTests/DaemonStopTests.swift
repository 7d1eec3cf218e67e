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

    /// A registration request the backend holds is cut short at the one deadline: the
    /// stop does not wait for the backend, or for the request's own timeout.
    @Test func aRegistrationRequestTheBackendHoldsIsCutShortAtTheDeadline() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.requestTimeout = 120 })
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .any, delay: 120, count: 1))
        _ = try await fixture.call(SetTokenCommand(token: "ABCDEF0123", wait: false))
        #expect(await eventually { fixture.backend.faults().isEmpty }, "the request is at the backend, held")
        let clock = ContinuousClock()
        let took = await clock.measure { await fixture.daemon.stop() }
        // The deadline is 2 s; the request would be held for 120.
        #expect(took < .seconds(60), "the stop took \(took)")
    }
}
