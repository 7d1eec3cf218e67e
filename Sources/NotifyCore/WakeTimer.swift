#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one kind of timer in notifyd: a task that sleeps until a moment, then calls back.
/// Two clocks use it:
/// - `WakeTimer<Date>`, on an actor's `WakeClock`, for the next time it must look at its
///   work again (a retry, an expiry, a refresh, a deletion's backoff): the registrar, the
///   retired registrations and the outbox each hold one, and tests move that clock by hand.
/// - `DeadlineTimer`, on the continuous clock, for the deadlines of callers waiting on an
///   actor (`--wait`): a caller's timeout is real time, which a test's clock must not stop.
///   One per actor, set for the earliest deadline and gone with the last waiter. A timer
///   per waiter would not do: a sleep cancelled when its waiter is answered still wakes the
///   process when its time comes, so a burst answered at once would wake an idle daemon
///   hundreds of times later.
///
/// Armed again only for a different time: a cancelled sleep keeps its system timer, and
/// the memory behind it, until its time comes, so re-arming on every look at the same
/// inputs would pile them up. `soonerOnly` keeps a timer armed for an earlier time as it
/// is (one that fires early finds nothing to do and arms the next).
struct WakeTimer<Moment: Comparable & Sendable> {
    private var armed: (at: Moment, task: Task<Void, Never>)?

    /// When it fires, if armed.
    var firesAt: Moment? { armed?.at }

    /// Arms it for `moment`, reached by `sleep`, after which `fire` runs (given `moment`);
    /// a timer armed before is cancelled, unless it is armed for `moment` already (or,
    /// with `soonerOnly`, for `moment` or sooner).
    mutating func arm(at moment: Moment, soonerOnly: Bool = false, sleep: @escaping @Sendable (Moment) async throws -> Void,
                      fire: @escaping @Sendable (Moment) async -> Void) {
        if let armed, soonerOnly ? armed.at <= moment : armed.at == moment { return }
        armed?.task.cancel()
        // The one unstructured task of a timer: it outlives the call that arms it, and is
        // cancelled by the next arming or by `cancel`.
        let task = Task {
            do { try await sleep(moment) } catch { return }
            await fire(moment)
        }
        armed = (moment, task)
    }

    /// Called by `fire`: forgets the timer that fired at `moment`, and says whether it was
    /// the one armed (a later arming may have replaced it meanwhile).
    @discardableResult
    mutating func fired(at moment: Moment) -> Bool {
        guard armed?.at == moment else { return false }
        armed = nil
        return true
    }

    mutating func cancel() {
        armed?.task.cancel()
        armed = nil
    }
}

extension WakeTimer where Moment == Date {
    /// Arms it for `date` on `clock`.
    mutating func arm(at date: Date, on clock: any WakeClock, soonerOnly: Bool = false, fire: @escaping @Sendable (Date) async -> Void) {
        arm(at: date, soonerOnly: soonerOnly, sleep: { try await clock.sleep(until: $0) }, fire: fire)
    }
}

/// The timer for the deadlines of callers waiting on an actor (see `WakeTimer`).
typealias DeadlineTimer = WakeTimer<ContinuousClock.Instant>

extension WakeTimer where Moment == ContinuousClock.Instant {
    /// Sets it for `deadline`, unless it fires by then already.
    mutating func arm(for deadline: ContinuousClock.Instant, fire: @escaping @Sendable (ContinuousClock.Instant) async -> Void) {
        arm(at: deadline, soonerOnly: true, sleep: { try await Task.sleep(until: $0, clock: .continuous) }, fire: fire)
    }
}
