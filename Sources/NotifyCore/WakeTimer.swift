#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one timer an actor keeps for the next time it must look at its work again (a
/// retry, an expiry, a refresh, a deletion's backoff), on its `WakeClock`: the registrar,
/// the retired registrations and the outbox each hold one, and nothing else arms timers
/// of that kind.
///
/// Armed again only for a different time: a cancelled sleep keeps its system timer, and
/// the memory behind it, until its time comes, so re-arming on every look at the same
/// inputs would pile them up. `soonerOnly` keeps a timer armed for an earlier time as it
/// is (the outbox's: a timer that fires early finds nothing to do and arms the next).
struct WakeTimer {
    private var armed: (at: Date, task: Task<Void, Never>)?

    /// When it fires, if armed.
    var firesAt: Date? { armed?.at }

    /// Arms it for `date`, after which `fire` runs (given `date`); a timer armed before is
    /// cancelled, unless it is armed for `date` already (or, with `soonerOnly`, for
    /// `date` or sooner).
    mutating func arm(at date: Date, on clock: any WakeClock, soonerOnly: Bool = false, fire: @escaping @Sendable (Date) async -> Void) {
        if let armed, soonerOnly ? armed.at <= date : armed.at == date { return }
        armed?.task.cancel()
        // The one unstructured task of a timer: it outlives the call that arms it, and is
        // cancelled by the next arming or by `cancel`.
        let task = Task {
            do { try await clock.sleep(until: date) } catch { return }
            await fire(date)
        }
        armed = (date, task)
    }

    /// Called by `fire`: forgets the timer that fired at `date`, and says whether it was
    /// the one armed (a later arming may have replaced it meanwhile).
    @discardableResult
    mutating func fired(at date: Date) -> Bool {
        guard armed?.at == date else { return false }
        armed = nil
        return true
    }

    mutating func cancel() {
        armed?.task.cancel()
        armed = nil
    }
}
