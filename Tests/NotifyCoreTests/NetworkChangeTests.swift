import Foundation
import NotifyProtocol
import Synchronization
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The registrar and the outbox with a fake network monitor (the test tells the shared
/// `BackendRecovery` what a monitor would), a scripted backend on another machine and a
/// clock the test moves: offline waits, network changes and waking from sleep.
struct NetworkChangeTests {
    static let backend = "https://backend.example"
    static let noRoute = BackendCallError.unreachable("cannot connect to \(backend): no route to the host (the network is unreachable)", noRoute: true)

    /// What a monitor on the socket loop reports, recorded with the events it causes.
    final class FakeMonitor: Sendable {
        let log: EventLog
        let recovery: BackendRecovery

        /// For `recovery`, which publishes its events to `log`.
        init(recovery: BackendRecovery, log: EventLog, watching: Bool = true) {
            self.log = log
            self.recovery = recovery
            if watching { recovery.networkWatched(by: "fake") }
        }

        /// With a recovery of its own.
        convenience init(watching: Bool = true) {
            let log = EventLog()
            self.init(recovery: BackendRecovery(onEvent: { log.append($0) }), log: log, watching: watching)
        }

        var events: [NetworkEvent] { log.events }
        var changes: [NetworkChangeKind] { events.map(\.change) }
    }

    final class EventLog: Sendable {
        private let list = Mutex<[NetworkEvent]>([])
        func append(_ event: NetworkEvent) { list.withLock { $0.append(event) } }
        var events: [NetworkEvent] { list.withLock { $0 } }
    }

    /// The parts as the daemon joins them (`Components`), with alice logged in, the default
    /// retry_min (5 s) and retry_max (30 min), and registrations without a quiet period.
    final class Fixture: Sendable {
        let directory: ScratchDirectory
        let backend: FakeBackend
        let clock: ManualClock
        let components: Components
        let monitor: FakeMonitor

        init(watching: Bool = true) async throws {
            directory = try ScratchDirectory()
            let (backend, clock, log) = (FakeBackend(), ManualClock(), EventLog())
            (self.backend, self.clock) = (backend, clock)
            let settings = SettingsStore(.init(backend: NetworkChangeTests.backend, policy: RegistrationPolicy(refreshInterval: 86400, debounce: 0)))
            components = Components(settings: settings, stateDirectory: directory.path, backend: backend, clock: clock, logger: .silent,
                                    onNetworkEvent: { log.append($0) })
            monitor = FakeMonitor(recovery: components.recovery, log: log, watching: watching)
            try await components.accounts.commit(Credentials(user: "alice", password: "alice", backend: nil))
        }

        func outbox() async -> Outbox {
            await components.outbox.start()
            return components.outbox
        }

        func registrar() -> Registrar { components.registrar }

        var sends: Int { backend.calls.filter { if case .send = $0 { true } else { false } }.count }

        /// Moves the clock from retry to retry for `seconds`, letting each attempt end, and
        /// returns how many sends the backend saw meanwhile.
        func attempts(during seconds: Double, of outbox: Outbox) async -> Int {
            let start = clock.now(), before = sends
            while let next = outbox.summary.nextAttemptAt, next <= start.addingTimeInterval(seconds) {
                let count = sends
                clock.advance(by: max(0, next.timeIntervalSince(clock.now())))
                // Moved past its time, a retry goes; one that does not is a failure to see,
                // not a reason to wait for ever.
                guard await eventually(10, { sends > count }) else {
                    let listed = await outbox.list().map { "\($0.id) \($0.state) next \(String(describing: $0.nextAttemptAt))" }
                    Issue.record("no attempt at \(next) (now \(clock.now()), \(clock.sleeperCount) timers): \(listed)")
                    break
                }
                // The backend has the request; the next attempt's time is known once the
                // outbox has its outcome. Read before, it is still this one's.
                guard await eventually(10, { await outbox.nothingUnderWay }) else {
                    Issue.record("the attempt at \(next) did not end")
                    break
                }
            }
            return sends - before
        }

        deinit { directory.remove() }
    }

    @Test func anOfflineMessageWaitsForTheNetworkWithOneAttemptIn10Minutes() async throws {
        let fixture = try await Fixture()
        let outbox = await fixture.outbox()
        fixture.backend.failEverything(Self.noRoute)
        let ids = try await outbox.submit(to: "bob", message: "hello", platforms: [.apns])
        let queued = await outbox.wait(for: ids, untilFinal: false, timeout: 10)
        #expect(queued.first?.state == .queued)
        #expect(queued.first?.error?.message.contains("offline") == true)
        #expect(fixture.monitor.recovery.networkStatus(of: nil).offlineSince == fixture.clock.now())
        #expect(fixture.monitor.changes == [.offline])

        let attempts = await fixture.attempts(during: 600, of: outbox)
        #expect(attempts == 0, "\(attempts) more attempts in 10 minutes offline")
        let started = fixture.monitor.recovery.wakes.started
        fixture.monitor.recovery.networkChanged(.down)
        // A change wakes the parts within the call or not at all.
        #expect(fixture.monitor.recovery.wakes.started == started, "a network that went away woke the outbox")
        #expect(fixture.sends == 1, "a network that went away brings nothing to retry")

        fixture.backend.failEverything(nil)
        fixture.monitor.recovery.networkChanged(.up)
        #expect(await eventually { await outbox.list().isEmpty }, "delivered")
        #expect(fixture.sends == 2)
        #expect(await eventually { fixture.monitor.recovery.networkStatus(of: nil).offlineSince == nil })
        #expect(fixture.monitor.changes == [.offline, .down, .up, .online])
    }

    /// Without a monitor, nothing would say when the network is back: the backoff it is,
    /// as before (and a failure without a route is the backend's like any other).
    @Test func withoutAMonitorTheBackoffRetriesAsBefore() async throws {
        let fixture = try await Fixture(watching: false)
        let outbox = await fixture.outbox()
        fixture.backend.failEverything(Self.noRoute)
        let ids = try await outbox.submit(to: "bob", message: "hello", platforms: [.apns])
        _ = await outbox.wait(for: ids, untilFinal: false, timeout: 10)
        let attempts = await fixture.attempts(during: 600, of: outbox)
        // 2.5–5 s, then 10–20, 40–80 and 160–320 s: one per backoff step.
        #expect(attempts >= 3, "\(attempts) more attempts in 10 minutes")
        #expect(fixture.monitor.recovery.networkStatus(of: nil).offlineSince == nil)
        #expect(fixture.monitor.changes.isEmpty)
    }

    @Test func anOfflineRegistrationCountsNoFailureAndGoesWhenTheNetworkChanges() async throws {
        let fixture = try await Fixture()
        let registrar = fixture.registrar()
        await registrar.start()
        fixture.backend.failEverything(Self.noRoute)
        let generation = try await registrar.setToken("AB", platform: nil).generation
        let offline = await registrar.waitForOutcome(generation: generation, timeout: 10)
        #expect(offline.registration.state == .retrying)
        #expect(offline.registration.failures == 0)
        #expect(offline.registration.nextAttemptAt == fixture.clock.now().addingTimeInterval(Backoff().ceiling))
        #expect(fixture.monitor.recovery.networkStatus(of: nil).offlineSince == fixture.clock.now())

        fixture.backend.failEverything(nil)
        fixture.monitor.recovery.networkChanged(.up)
        #expect(await eventually { await registrar.registrationStatus.state == .registered })
        // Online once the registration's outcome is saved, a moment after the machine has it.
        #expect(await eventually { fixture.monitor.recovery.networkStatus(of: nil).offlineSince == nil })
        #expect(fixture.monitor.changes == [.offline, .up, .online])
    }

    /// A sleep whose timer stopped with the machine (or a wall clock set forward) leaves a
    /// refresh overdue; the wake from sleep makes it happen then, not 24 h of awake time later.
    @Test func aRefreshThatFellDueDuringSleepHappensAtResume() async throws {
        let fixture = try await Fixture()
        let registrar = fixture.registrar()
        await registrar.start()
        let generation = try await registrar.setToken("AB", platform: nil).generation
        #expect(await registrar.waitForOutcome(generation: generation, timeout: 10).registration.state == .registered)
        let registered = fixture.backend.registrationCalls.count
        #expect(await eventually { fixture.clock.sleeperCount == 1 }, "the refresh timer")

        fixture.clock.jump(by: 86400 + 3600)
        await Task.yield()
        #expect(fixture.backend.registrationCalls.count == registered, "the timer did not fire")
        fixture.monitor.recovery.networkChanged(.resumed(slept: 86400 + 3600))
        #expect(await eventually { fixture.backend.registrationCalls.count == registered + 1 })
        #expect(fixture.backend.registrationCalls.last == .upsert(id: "id-1", handle: "AB", tags: []))
        #expect(fixture.monitor.changes == [.resumed])
        let slept = try #require(fixture.monitor.events.first?.slept)
        #expect(slept == 86400 + 3600)
    }

    @Test func aRetryThatFellDueWhileTheClockWasSetGoesThen() async throws {
        let fixture = try await Fixture()
        let outbox = await fixture.outbox()
        fixture.backend.answerNextSends([.status(503, retryAfter: 30, body: "")])
        let ids = try await outbox.submit(to: "bob", message: "hello", platforms: [.apns])
        #expect(await outbox.wait(for: ids, untilFinal: false, timeout: 10).first?.state == .queued)
        fixture.clock.jump(by: 60)
        fixture.monitor.recovery.networkChanged(.clockSet)
        #expect(await eventually { await outbox.list().isEmpty }, "delivered")
        #expect(fixture.sends == 2)
    }

    /// `status` shows offline since the earliest party found no route; watchers hear of
    /// offline and online once each.
    @Test func offlineIsShownSinceTheEarliestPartyAndToldOnce() {
        let monitor = FakeMonitor()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        monitor.recovery.setOffline(.outbox, since: start.addingTimeInterval(5))
        #expect(monitor.recovery.networkStatus(of: nil).offlineSince == start.addingTimeInterval(5))
        monitor.recovery.setOffline(.registrar, since: start)
        #expect(monitor.recovery.networkStatus(of: nil) == NetworkStatus(monitor: "fake", offlineSince: start))
        monitor.recovery.setOffline(.registrar, since: start)
        monitor.recovery.setOffline(.registrar, since: nil)
        #expect(monitor.recovery.networkStatus(of: nil).offlineSince == start.addingTimeInterval(5))
        monitor.recovery.setOffline(.outbox, since: nil)
        #expect(monitor.recovery.networkStatus(of: nil).offlineSince == nil)
        #expect(monitor.changes == [.offline, .online])
    }
}
