import DevBackend
import Foundation
@testable import NotifyCore
import NotifyProtocol
import NotifyTestSupport
import Testing

/// notifyd against the dev backend after an outage: the first request the backend answers
/// ends every wait on it. The backoffs here are an hour long, so whatever arrives within
/// the test's patience arrived because the backend answered something else.
@Suite(.stopsFixtures) struct BackendRecoveryIntegrationTests {
    static let hour = Backoff(initial: 3600, multiplier: 2, maximum: 3600)

    @Test func aQueuedMessageGoesOnceTheBackendDeliversAnother() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.retry = Self.hour })
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        let queued = try await fixture.call(SendCommand(to: "bob", message: "waited"))
        #expect(queued.deliveries.first?.state == .queued)

        let delivered = try await fixture.call(SendCommand(to: "carol", message: "went through"))
        #expect(delivered.deliveries.first?.state == .delivered)
        #expect(await eventually { fixture.backend.pushes().contains { $0.displayedText == "From alice: waited" } })
        // The backend has it; the outbox lets it go once the answer is back and written.
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.isEmpty) == true })
    }

    @Test func aRetryingRegistrationGoesOnceTheBackendDeliversAMessage() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.policy = RegistrationPolicy(refreshInterval: 86400, backoff: Self.hour, debounce: 0) })
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 503, count: 1))
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)

        #expect(try await fixture.call(SendCommand(to: "bob", message: "hi")).deliveries.first?.state == .delivered)
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
    }

    @Test func aQueuedMessageGoesOnceTheRegistrationSucceeds() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.retry = Self.hour })
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "waited")).deliveries.first?.state == .queued)

        #expect(try await fixture.call(SetTokenCommand(token: "ABCD")).registration.state == .registered)
        #expect(await eventually { fixture.backend.pushes().contains { $0.displayedText == "From alice: waited" } })
    }

    /// A backend that asked for time keeps it.
    @Test func aRetryAfterIsNotCutShort() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.retry = Self.hour })
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503, retryAfter: 3600, count: 1))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "asked to wait")).deliveries.first?.state == .queued)
        #expect(try await fixture.call(SendCommand(to: "carol", message: "went through")).deliveries.first?.state == .delivered)
        // Carol's delivery started the wakes it brings before her sender heard: once they
        // have ended, the outbox has taken them in, and bob's wait is what they left.
        #expect(await eventually { fixture.daemon.recovery.wakes.running == 0 })
        let waiting = try await fixture.call(OutboxCommand()).deliveries
        #expect(waiting.map(\.to) == ["bob"], "the backend's Retry-After is kept")
        #expect(waiting.first.flatMap(\.nextAttemptAt).map { $0.timeIntervalSinceNow > 1800 } == true,
                "the backend's Retry-After is kept: \(String(describing: waiting.first?.nextAttemptAt))")
    }
}
