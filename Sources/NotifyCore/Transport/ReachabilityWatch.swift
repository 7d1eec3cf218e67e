#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifySystem
import Synchronization

/// Watches for the return of a backend that could not be reached at all, so that what
/// waits on it goes out within 30 s of its return even when nothing else talks to it (a
/// quiet desktop makes no other request that could notice).
///
/// One probe loop per backend, never one per message, and one probe at a time: a TCP
/// connect (with a TLS handshake where the handshake was what failed), no HTTP request,
/// so the backend pays nothing above its transport. The intervals grow from about 2 s to
/// 30 s, as tailscale's control client caps its reconnects, jittered on the way up so
/// that devices that lost the backend together do not come back together; at the cap
/// they stay exactly 30 s, so a watch costs one probe per 30 s on average. The loop ends
/// when the backend is reached (by the probe or by any request), and when nothing waits
/// on a backend any more.
final class ReachabilityWatch: Sendable {
    /// The longest interval between probes: how late a backend's return may be seen.
    static let longestInterval: Double = 30
    static let firstInterval: Double = 2
    /// A backend lost again within this long of its return is probed at the interval its
    /// last watch had reached: a flapping backend costs no more than one long outage.
    static let flapWindow: Double = 5 * 60

    struct Watched: Sendable {
        var since: Date
        var tls: Bool
        /// The interval the loop waits now.
        var interval: Double
        /// Tells the loop watching this backend from an older one still asleep.
        var loop: Int
    }

    /// Whether `backend` can be connected to (with TLS when asked).
    typealias Probe = @Sendable (_ backend: String, _ tls: Bool) async -> Bool

    private struct State {
        var watched: [String: Watched] = [:]
        var nextLoop = 0
        /// Where the probes of a backend were when its watch last ended, and when: a backend
        /// lost again soon after (one that flaps) is probed from there, not from 2 s.
        var ended: [String: (at: Date, interval: Double)] = [:]
        /// Watches ended because nothing waited, with their TLS: taken up again when a wait
        /// begins soon after (a party may say it waits only after its failure was judged).
        var idle: [String: (at: Date, tls: Bool)] = [:]

        var earliest: Earliest? {
            watched.values.min { $0.since < $1.since }.map { ($0.since, $0.interval) }
        }
    }

    private let state = Mutex(State())
    private let loopTasks = TrackedTasks()
    private let clock: any WakeClock
    private let probe: Probe
    private let anythingWaits: @Sendable () -> Bool
    private let changed: @Sendable (_ backend: String, _ watched: Bool, _ earliest: Earliest?) -> Void
    private let returned: @Sendable (_ backend: String) -> Void

    /// The backend watched longest: since when, and the interval between its probes now.
    typealias Earliest = (since: Date, interval: Double)

    /// `anythingWaits` says whether a party still waits on a backend; `changed` is told when
    /// a backend starts or stops being watched, with the watch's `earliest` then, under the
    /// watch's lock (so in order; it must not call back); `returned` when a probe reached
    /// it, and must end its watch (`reached`).
    init(clock: any WakeClock, probe: @escaping Probe, anythingWaits: @escaping @Sendable () -> Bool,
         changed: @escaping @Sendable (String, Bool, Earliest?) -> Void, returned: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.probe = probe
        self.anythingWaits = anythingWaits
        self.changed = changed
        self.returned = returned
    }

    /// A request found no connection to `backend`: watch it, unless already watched (a TLS
    /// failure makes the probes include the handshake).
    func cannotReach(_ backend: String, tls: Bool) {
        let loop = state.withLock { state -> Int? in
            if state.watched[backend] != nil {
                if tls { state.watched[backend]?.tls = true }
                return nil
            }
            let loop = state.nextLoop
            state.nextLoop += 1
            let now = clock.now()
            let recent = state.ended[backend].flatMap { now.timeIntervalSince($0.at) < Self.flapWindow ? $0.interval : nil }
            state.ended[backend] = nil
            state.watched[backend] = Watched(since: now, tls: tls, interval: recent ?? Self.firstInterval, loop: loop)
            changed(backend, true, state.earliest)
            return loop
        }
        guard let loop else { return }
        loopTasks.start { [self] in await watch(backend, loop: loop) }
    }

    /// Forgets `backend`'s watch, keeping how far its probes had got. Under the lock.
    private static func endWatch(_ backend: String, in state: inout State, at now: Date) -> Bool {
        guard let watched = state.watched.removeValue(forKey: backend) else { return false }
        state.ended[backend] = (now, watched.interval)
        state.ended = state.ended.filter { now.timeIntervalSince($0.value.at) < flapWindow }
        return true
    }

    /// A party waits on a backend again: the watches that ended for want of one, lately,
    /// are taken up again.
    func somethingWaits() {
        let now = clock.now()
        let resumed = state.withLock { state -> [(String, Bool)] in
            defer { state.idle = [:] }
            return state.idle.compactMap { now.timeIntervalSince($0.value.at) < Self.flapWindow ? ($0.key, $0.value.tls) : nil }
        }
        for (backend, tls) in resumed { cannotReach(backend, tls: tls) }
    }

    /// `backend` answered: it is not watched any more. Returns whether it was.
    @discardableResult
    func reached(_ backend: String) -> Bool {
        state.withLock { state in
            state.idle[backend] = nil
            guard Self.endWatch(backend, in: &state, at: clock.now()) else { return false }
            changed(backend, false, state.earliest)
            return true
        }
    }

    /// The backend watched longest, since when, and the interval between its probes now.
    var earliest: Earliest? { state.withLock { $0.earliest } }

    /// Since when `backend` has been watched, and the interval between its probes now; nil
    /// while it is not.
    func watched(_ backend: String) -> Earliest? {
        state.withLock { $0.watched[backend].map { ($0.since, $0.interval) } }
    }

    /// Loops begun so far, and those not yet ended: what a test waits on to know that a
    /// watch never began, or that its loop can probe no more.
    var loops: (begun: Int, running: Int) { (state.withLock { $0.nextLoop }, loopTasks.count) }

    /// Ends every loop, and returns once they have ended: a probe under way has returned
    /// and none starts after. A probe that ignores its cancellation holds the stop for
    /// `ShutdownDeadline` at most.
    func stop() async {
        await loopTasks.cancelAndWait(upTo: ShutdownDeadline.seconds)
    }

    private func watch(_ backend: String, loop: Int) async {
        var random = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
        var step = state.withLock { $0.watched[backend]?.interval } ?? Self.firstInterval
        while true {
            // Jittered on the way up; exact at the cap, so that the average is one per cap.
            let interval = step < Self.longestInterval ? step * (0.5 + 0.5 * random.nextUnit()) : Self.longestInterval
            do {
                try await clock.sleep(until: clock.now().addingTimeInterval(interval))
            } catch {
                return
            }
            // A sleep that ended as the stop came: no probe starts once stopping.
            guard !Task.isCancelled, let tls = current(backend, loop: loop) else { return }
            guard anythingWaits() else {
                let now = clock.now()
                if end(backend, loop: loop) { state.withLock { $0.idle[backend] = (now, tls) } }
                return
            }
            if await probe(backend, tls) {
                // Ends this watch too (`reached`), once what waited is woken.
                if current(backend, loop: loop) != nil { returned(backend) }
                return
            }
            let grown = min(step * 2, Self.longestInterval)
            state.withLock { state in
                guard state.watched[backend]?.loop == loop else { return }
                state.watched[backend]?.interval = grown
            }
            step = grown
        }
    }

    /// Whether this loop still watches `backend`, and with TLS or not.
    private func current(_ backend: String, loop: Int) -> Bool? {
        state.withLock { state in
            guard let watched = state.watched[backend], watched.loop == loop else { return nil }
            return watched.tls
        }
    }

    /// Stops watching `backend`, if this loop still does; returns whether it did.
    @discardableResult
    private func end(_ backend: String, loop: Int) -> Bool {
        state.withLock { state in
            guard state.watched[backend]?.loop == loop, Self.endWatch(backend, in: &state, at: clock.now()) else { return false }
            changed(backend, false, state.earliest)
            return true
        }
    }
}
