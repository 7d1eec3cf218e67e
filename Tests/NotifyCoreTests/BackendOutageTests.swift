import Foundation
import NotifyProtocol
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// The parts as the daemon joins them (`Components`), a backend that cannot be reached
/// for a while and nothing else talking to it, on a clock the test moves one second at a
/// time with the default settings: how late the queue goes once the backend is back, and
/// what the outage costs the backend.
struct BackendOutageTests {
    static let backend = "https://backend.example"
    static let refused = BackendCallError.cannotConnect("cannot connect to \(backend): connection refused", tls: false)

    final class Fixture: Sendable {
        let directory: ScratchDirectory
        let backend = FakeBackend(probing: true)
        let clock = ManualClock()
        let components: Components

        init() async throws {
            directory = try ScratchDirectory()
            let settings = SettingsStore(.init(backend: BackendOutageTests.backend, policy: RegistrationPolicy(refreshInterval: 86400, debounce: 0)))
            components = Components(settings: settings, stateDirectory: directory.path, backend: backend, clock: clock, logger: .silent)
            try await components.accounts.commit(Credentials(user: "alice", password: "alice", backend: nil))
            await components.outbox.start()
        }

        var sends: Int { backend.calls.filter { if case .send = $0 { true } else { false } }.count }

        /// Queues `count` messages to `recipients` recipients, in turn.
        func queue(_ count: Int, to recipients: Int) async throws {
            for index in 0..<count {
                _ = try await components.outbox.submit(to: "user\(index % recipients)", message: "message \(index)", platforms: [.apns])
            }
            #expect(await eventually { self.sends >= recipients }, "each recipient's first message tried")
        }

        /// Moves the clock one second at a time for `seconds` (or until `stop`), letting
        /// what falls due run before the next second. Returns the seconds moved.
        @discardableResult
        func run(for seconds: Int, until stop: () async -> Bool = { false }) async -> Int {
            for second in 0..<seconds {
                if await stop() { return second }
                clock.advance(by: 1)
                await settle()
            }
            return seconds
        }

        /// Returns once what the last second woke is done and asleep again: no wake under
        /// way, no send in flight or outcome being written (the outbox looks at its queue
        /// again after each write), the probe loop asleep while the backend is watched and
        /// the outbox's timer while anything is queued.
        func settle() async {
            // However long a loaded machine takes, as long as the work goes on.
            _ = await eventually(progressing: { self.sends + self.backend.probesMade + self.clock.sleepsStarted }) {
                let watched = components.recovery.networkStatus(of: BackendOutageTests.backend).backendUnreachableSince != nil
                let (queued, busy) = await components.outbox.queuedAndBusy
                return components.recovery.wakesInProgress == 0 && !busy
                    && clock.sleeperCount >= (watched ? 1 : 0) + (queued > 0 ? 1 : 0)
            }
        }

        deinit { directory.remove() }
    }

    /// An outage of 1 min, 10 min or 2 h, with 100 messages queued to 10 recipients: all go
    /// within 30 s of the backend's return, and the outage cost the backend no more
    /// requests than the backoff makes (one per recipient per step, steps growing to 30 min).
    @Test(arguments: [60, 600, 7200])
    func theQueueGoesWithin30SecondsOfTheBackendsReturn(outage: Int) async throws {
        let fixture = try await Fixture()
        fixture.backend.failEverything(Self.refused)
        try await fixture.queue(100, to: 10)
        await fixture.run(for: outage)
        let duringOutage = fixture.sends
        let probes = fixture.backend.probesMade
        let status = fixture.components.recovery.networkStatus(of: BackendOutageTests.backend)
        #expect(status.backendUnreachableSince != nil)

        fixture.backend.failEverything(nil)
        let waited = await fixture.run(for: 120) { fixture.sends > duringOutage }
        #expect(waited <= 30, "the first request \(waited) s after the backend came back from \(outage) s")
        #expect(await eventually { await fixture.components.outbox.list().isEmpty }, "the rest at once, without the clock moving")
        #expect(fixture.sends == duringOutage + 100, "each message sent once it was back")
        #expect(fixture.components.recovery.networkStatus(of: BackendOutageTests.backend).backendUnreachableSince == nil)

        #expect(duringOutage <= 10 * Self.mostAttempts(in: outage), "\(duringOutage) requests in \(outage) s")
        #expect(probes <= outage / 30 + 5, "\(probes) probes in \(outage) s")
    }

    /// The most attempts one recipient's messages can make while the backend cannot be
    /// reached for `seconds`: the first, then one per backoff step, each at least half of
    /// 5 s ×4ⁿ, up to 30 min.
    static func mostAttempts(in seconds: Int) -> Int {
        var attempts = 1, elapsed = 0.0, step = 5.0
        while true {
            elapsed += step / 2
            if elapsed > Double(seconds) { return attempts }
            attempts += 1
            step = min(step * 4, 1800)
        }
    }

    /// A backend that is up every other second for a minute: no more failed requests than
    /// one outage of a minute can make, and the queue goes once it stays up.
    @Test func aFlappingBackendCostsNoMoreThanOneOutage() async throws {
        let outageRequests = 4 * Self.mostAttempts(in: 60)
        let flapping = try await Fixture()
        flapping.backend.failEverything(Self.refused)
        try await flapping.queue(20, to: 4)
        for second in 0..<60 {
            flapping.backend.failEverything(second % 2 == 0 ? nil : Self.refused)
            await flapping.run(for: 1)
        }
        flapping.backend.failEverything(Self.refused)
        let failed = flapping.sends - (20 - (await flapping.components.outbox.list().count))
        #expect(failed <= outageRequests, "flapping: \(failed) failed requests, one outage: \(outageRequests)")
        flapping.backend.failEverything(nil)
        let before = flapping.sends
        let waited = await flapping.run(for: 120) {
            let left = await flapping.components.outbox.list()
            return flapping.sends > before || left.isEmpty
        }
        #expect(waited <= 30, "what is left goes within 30 s once it stays up")
        #expect(await eventually { await flapping.components.outbox.list().isEmpty })
    }
}

extension Outbox {
    /// Read in one hop, so the two agree: how many are queued, and whether a send or the
    /// writing of its outcome is under way.
    var queuedAndBusy: (queued: Int, busy: Bool) {
        (queue.queued.count, queue.inFlightCount > 0 || !outcomes.beingWritten.isEmpty)
    }
}
