import Foundation
import NotifyProtocol
import NotifyTestSupport
import Synchronization
import Testing
@testable import NotifyCore

/// `BackendRecovery` watching a backend that could not be reached, with a probe the test
/// scripts and a clock it moves: when it probes, how often, what its return wakes, and
/// what never starts a probe.
struct ReachabilityWatchTests {
    static let backend = "https://backend.example"
    static let refused = BackendCallError.cannotConnect("cannot connect to \(backend): connection refused", tls: false)

    /// The probe the test scripts: down until `up`, each call recorded with its time.
    final class ScriptedProbe: Sendable {
        private let state = Mutex<(up: Bool, calls: [(backend: String, tls: Bool, at: Date)])>((false, []))
        let clock: ManualClock

        init(clock: ManualClock) { self.clock = clock }

        func probe(_ backend: String, tls: Bool) -> Bool {
            state.withLock { state in
                state.calls.append((backend, tls, clock.now()))
                return state.up
            }
        }

        func setUp(_ up: Bool) { state.withLock { $0.up = up } }
        var calls: [(backend: String, tls: Bool, at: Date)] { state.withLock { $0.calls } }
    }

    final class Events: Sendable {
        private let list = Mutex<[NetworkEvent]>([])
        func append(_ event: NetworkEvent) { list.withLock { $0.append(event) } }
        var changes: [NetworkChangeKind] { list.withLock { $0.map(\.change) } }
    }

    final class Wakes: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ backend: String) { list.withLock { $0.append(backend) } }
        var backends: [String] { list.withLock { $0 } }
    }

    struct Fixture {
        let clock = ManualClock()
        let probe: ScriptedProbe
        let events = Events()
        let wakes = Wakes()
        let recovery: BackendRecovery

        init() {
            probe = ScriptedProbe(clock: clock)
            let (events, wakes, probe) = (events, wakes, probe)
            recovery = BackendRecovery(onEvent: { events.append($0) })
            recovery.watchReachability(clock: clock) { probe.probe($0, tls: $1) }
            recovery.attach(.outbox, wake: { wakes.append($0) })
        }

        /// A request failed as `error`, and the outbox waits on the backend after it.
        func failed(_ error: BackendCallError) -> BackendFailure {
            let failure = recovery.classify(error, route: .send, backend: ReachabilityWatchTests.backend)
            recovery.setWaiting(.outbox, true)
            return failure
        }

        /// Moves the clock to the probe loop's next wake, once it sleeps; returns how far.
        func nextProbe() async -> Double? {
            let asleep = await eventually { clock.sleeperCount == 1 }
            guard asleep else { return nil }
            let before = probe.calls.count, start = clock.now()
            var moved = 0.0
            while probe.calls.count == before {
                clock.advance(by: 0.25)
                moved += 0.25
                if moved > 120 { return nil }
                // The usual bound: a loop slow to come back to its sleep on a loaded machine is late, not stuck.
                let settled = await eventually { probe.calls.count > before || clock.sleeperCount == 1 }
                if !settled { return nil }
            }
            return probe.calls.last.map { $0.at.timeIntervalSince(start) }
        }
    }

    @Test func aRefusedConnectionIsWatchedWithIntervalsGrowingTo30SecondsThenExactly30() async throws {
        let fixture = Fixture()
        #expect(fixture.failed(Self.refused) == .unreachable(reason: "cannot connect to \(Self.backend): connection refused", tls: false))
        #expect(fixture.recovery.networkStatus(of: Self.backend).backendUnreachableSince == fixture.clock.now())
        #expect(fixture.events.changes == [.backendUnreachable])
        var intervals: [Double] = []
        for _ in 0..<8 {
            intervals.append(try #require(await fixture.nextProbe()))
        }
        // Drawn between half and all of 2, 4, 8 and 16 s (to the clock's quarter seconds), then 30 s each.
        for (interval, step) in zip(intervals, [2.0, 4, 8, 16]) {
            #expect(interval >= step / 2 && interval <= step + 0.25, "\(intervals)")
        }
        #expect(intervals.dropFirst(4).allSatisfy { abs($0 - 30) <= 0.25 }, "\(intervals)")
        #expect(fixture.probe.calls.allSatisfy { $0.backend == Self.backend && !$0.tls })
        #expect(fixture.recovery.networkStatus(of: Self.backend).checkingEvery == 30)
        #expect(fixture.wakes.backends.isEmpty, "nothing woken while it is down")
    }

    /// `status` shows each interval the probes move to, as the probes wait it out.
    @Test func eachNewIntervalIsShownInStatus() async throws {
        let fixture = Fixture()
        _ = fixture.failed(Self.refused)
        var shown = [fixture.recovery.networkStatus(of: Self.backend).checkingEvery]
        for _ in 0..<6 {
            _ = try #require(await fixture.nextProbe())
            // Asleep again: the interval for the next probe is set.
            #expect(await eventually { fixture.clock.sleeperCount == 1 })
            shown.append(fixture.recovery.networkStatus(of: Self.backend).checkingEvery)
        }
        #expect(shown == [2, 4, 8, 16, 30, 30, 30])
    }

    @Test func itsReturnWakesWhatWaitsAndEndsTheWatch() async throws {
        let fixture = Fixture()
        _ = fixture.failed(Self.refused)
        _ = try #require(await fixture.nextProbe())
        fixture.probe.setUp(true)
        _ = try #require(await fixture.nextProbe())
        #expect(await eventually { fixture.wakes.backends == [Self.backend] })
        #expect(fixture.recovery.networkStatus(of: Self.backend).backendUnreachableSince == nil)
        #expect(fixture.events.changes == [.backendUnreachable, .backendReachable])
        // Its loop ended: nothing is left that could probe again.
        #expect(await eventually { fixture.recovery.reachabilityLoops.running == 0 }, "the watch went on after the backend was back")
        #expect(fixture.clock.sleeperCount == 0, "no probe after the backend is back")
        #expect(fixture.probe.calls.count == 2)
    }

    /// Lost again soon after its return: probed from where the last watch had got, so a
    /// backend that flaps costs no more probes than one that stays down.
    @Test func aBackendLostAgainSoonIsProbedAtTheIntervalReached() async throws {
        let fixture = Fixture()
        _ = fixture.failed(Self.refused)
        for _ in 0..<5 { _ = try #require(await fixture.nextProbe()) }
        fixture.probe.setUp(true)
        _ = try #require(await fixture.nextProbe())
        #expect(await eventually { fixture.recovery.networkStatus(of: Self.backend).backendUnreachableSince == nil })
        fixture.probe.setUp(false)
        _ = fixture.failed(Self.refused)
        #expect(fixture.recovery.networkStatus(of: Self.backend).checkingEvery == 30)
        let interval = try #require(await fixture.nextProbe())
        #expect(abs(interval - 30) <= 0.25, "\(interval)")

        // Long after: from the start again.
        _ = fixture.failed(.status(503, retryAfter: nil, body: ""))
        fixture.clock.advance(by: 600)
        _ = fixture.failed(Self.refused)
        #expect(fixture.recovery.networkStatus(of: Self.backend).checkingEvery == 2)
    }

    @Test func aTLSFailureIsProbedWithTheHandshake() async throws {
        let fixture = Fixture()
        #expect(fixture.failed(.cannotConnect("TLS failed", tls: true)) == .unreachable(reason: "TLS failed", tls: true))
        _ = try #require(await fixture.nextProbe())
        #expect(fixture.probe.calls.map(\.tls) == [true])
    }

    /// A backend that answered, with any status, is up: no probe, and a watch ends.
    @Test func anHTTPErrorIsNotUnreachabilityAndEndsAWatch() async throws {
        let fixture = Fixture()
        for status in [503, 502, 429] {
            #expect(fixture.failed(.status(status, retryAfter: nil, body: "")) == BackendFailure.classify(status: status, retryAfter: nil, body: "", route: .send))
            #expect(fixture.failed(.status(status, retryAfter: nil, body: "")) != .unreachable(reason: "", tls: false))
        }
        #expect(fixture.failed(.status(403, retryAfter: 60, body: "")) != .unreachable(reason: "", tls: false))
        // A watch begins within the call that judges the failure, or not at all.
        #expect(fixture.recovery.reachabilityLoops.begun == 0, "an answer began a watch")
        #expect(fixture.clock.sleeperCount == 0)
        #expect(fixture.events.changes.isEmpty)
        #expect(fixture.recovery.networkStatus(of: Self.backend).backendUnreachableSince == nil)

        _ = fixture.failed(Self.refused)
        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        _ = fixture.failed(.status(503, retryAfter: nil, body: ""))
        #expect(fixture.recovery.networkStatus(of: Self.backend).backendUnreachableSince == nil)
        fixture.clock.advance(by: 60)
        #expect(await eventually { fixture.recovery.reachabilityLoops.running == 0 }, "the watch went on after the answer")
        #expect(fixture.probe.calls.isEmpty, "the answer ended the watch before its first probe")
        #expect(fixture.wakes.backends.isEmpty, "an error answer wakes nothing")
    }

    @Test func aTimeoutAfterTheConnectionWasMadeIsNotUnreachability() async throws {
        let fixture = Fixture()
        #expect(fixture.failed(.unreachable("the request timed out", noRoute: false)) == .transient(retryAfter: nil, reason: "the request to the backend failed: the request timed out"))
        #expect(fixture.failed(.unreachable("no connection in time", noRoute: false, connecting: true)) == .unreachable(reason: "no connection in time", tls: false))
    }

    @Test func oneProbeLoopForTheBackendHoweverManyFailures() async throws {
        let fixture = Fixture()
        for _ in 0..<100 { _ = fixture.failed(Self.refused) }
        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        // Each loop begins within the failure that starts it: none can come later.
        #expect(fixture.recovery.reachabilityLoops.begun == 1)
        #expect(fixture.clock.sleeperCount == 1)
        #expect(fixture.events.changes == [.backendUnreachable])
    }

    @Test func nothingWaitingEndsTheWatch() async throws {
        let fixture = Fixture()
        _ = fixture.failed(Self.refused)
        _ = try #require(await fixture.nextProbe())
        fixture.recovery.setWaiting(.outbox, false)
        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        fixture.clock.advance(by: 30)
        #expect(await eventually { fixture.recovery.networkStatus(of: Self.backend).backendUnreachableSince == nil })
        #expect(fixture.probe.calls.count == 1, "no probe once nothing waits")
        #expect(fixture.events.changes == [.backendUnreachable, .backendReachable])
        #expect(fixture.clock.sleeperCount == 0)

        // A wait that begins soon after (its failure judged before the party said it
        // waits) takes the watch up again.
        fixture.recovery.setWaiting(.outbox, true)
        #expect(fixture.recovery.networkStatus(of: Self.backend).backendUnreachableSince != nil)
        _ = try #require(await fixture.nextProbe())
        #expect(fixture.probe.calls.count == 2)
    }

    /// A 2 h outage: at most one probe per 30 s on average, the few of the ramp aside.
    @Test func aTwoHourOutageCostsOneProbePer30Seconds() async throws {
        let fixture = Fixture()
        _ = fixture.failed(Self.refused)
        let start = fixture.clock.now()
        while fixture.clock.now().timeIntervalSince(start) < 7200 {
            _ = try #require(await fixture.nextProbe())
        }
        let probes = fixture.probe.calls.count
        #expect(probes <= 7200 / 30 + 4, "\(probes) probes")
        #expect(probes >= 7200 / 30 - 1, "\(probes) probes")
    }

    @Test func stopEndsAWatchAsleep() async throws {
        let fixture = Fixture()
        _ = fixture.failed(Self.refused)
        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        await fixture.recovery.shutdown()
        #expect(fixture.clock.sleeperCount == 0)
        // The stop ended the loop before it returned: nothing is left that could probe.
        #expect(fixture.recovery.reachabilityLoops.running == 0)
        fixture.clock.advance(by: 60)
        #expect(fixture.probe.calls.isEmpty)
    }

    /// A probe under way when the stop comes (a connect that ends in its own time) has
    /// ended before the stop returns, and its loop with it: nothing outlives the stop.
    @Test func stopReturnsOnceTheProbeUnderWayHasEnded() async throws {
        let clock = ManualClock(), journal = ServiceGroupTests.Journal(), gate = TrackedTasksTests.Gate()
        let recovery = BackendRecovery()
        recovery.watchReachability(clock: clock) { _, _ in
            journal.note("probe began")
            await withTaskCancellationHandler { await gate.wait() } onCancel: { journal.note("probe cancelled") }
            journal.note("probe ended")
            return false
        }
        _ = recovery.classify(Self.refused, route: .send, backend: Self.backend)
        recovery.setWaiting(.outbox, true)
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: ReachabilityWatch.longestInterval)
        #expect(await eventually { journal.all.contains("probe began") })
        let stopped = Task {
            await recovery.shutdown()
            journal.note("stop returned")
        }
        #expect(await eventually { journal.all.contains("probe cancelled") })
        gate.open()
        await stopped.value
        #expect(journal.all == ["probe began", "probe cancelled", "probe ended", "stop returned"])
        #expect(recovery.reachabilityLoops.running == 0)
        clock.advance(by: ReachabilityWatch.longestInterval * 4)
        #expect(clock.sleeperCount == 0)
        #expect(journal.count("probe began") == 1, "a probe after the stop")
    }
}
