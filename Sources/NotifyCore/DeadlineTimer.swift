/// One timer for the deadlines of many callers waiting on an actor, in real time (the
/// continuous clock, which a test's `WakeClock` must not stop): set for the earliest, and
/// moved only when an earlier one comes. A timer per waiter would not do: a sleep
/// cancelled when its waiter is answered still wakes the process when its time comes (the
/// timer under it stays armed), so a burst answered at once would wake an idle daemon
/// hundreds of times later.
struct DeadlineTimer {
    private var timer: (fires: ContinuousClock.Instant, task: Task<Void, Never>)?

    /// When the timer fires, while it is set.
    var firesAt: ContinuousClock.Instant? { timer?.fires }

    /// Sets the timer for `deadline`, unless it fires by then already; `fire` is called when
    /// it does, and must call `fired` before arming it again.
    mutating func arm(for deadline: ContinuousClock.Instant, fire: @escaping @Sendable () async -> Void) {
        if let timer, timer.fires <= deadline { return }
        timer?.task.cancel()
        // A task of its own, kept here: the wait outlives the turn that sets it, and an
        // earlier deadline, or no waiter left, cancels it.
        let task = Task {
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
            await fire()
        }
        timer = (deadline, task)
    }

    /// The timer fired: forgotten, so that the next `arm` sets one.
    mutating func fired() {
        timer = nil
    }

    mutating func cancel() {
        timer?.task.cancel()
        timer = nil
    }
}
