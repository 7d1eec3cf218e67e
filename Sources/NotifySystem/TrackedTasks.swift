import Synchronization

/// The tasks a part starts on its own (a wake, a reply being produced), kept so that its
/// stop can wait for them, as a service group waits for its services: nothing it started
/// outlives it, and none starts once it stopped.
public final class TrackedTasks: Sendable {
    private struct State {
        var next = 0
        var running: [Int: Task<Void, Never>] = [:]
        var stopped = false
        /// Callers waiting for the last task to end, by a number of their own (not a
        /// task's: `started` counts tasks only).
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// Starts `work` now, unless `stopAndWait` was called; returns whether it started.
    @discardableResult
    public func start(_ work: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            let id = state.next
            state.next += 1
            // Made and kept under the lock, so that its own removal comes after.
            state.running[id] = Task { [self] in
                await work()
                let waiting = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.running.removeValue(forKey: id)
                    guard state.running.isEmpty else { return [] }
                    defer { state.waiting = [:] }
                    return Array(state.waiting.values)
                }
                for waiter in waiting { waiter.resume() }
            }
            return true
        }
    }

    /// How many run now.
    public var count: Int { state.withLock { $0.running.count } }

    /// How many were ever started.
    public var started: Int { state.withLock { $0.next } }

    /// True once a stop began: nothing starts any more.
    public var isStopping: Bool { state.withLock { $0.stopped } }

    /// Starts nothing more, and returns once every task started has ended.
    public func stopAndWait() async {
        stop()
        await untilNoneRuns()
    }

    /// Starts nothing more, and returns once every task started has ended, or after
    /// `seconds` with those still running cancelled (a task that waits on something that
    /// will not come cannot hold a stop for longer). Returns how many were cancelled.
    @discardableResult
    public func stopAndWait(cancellingAfter seconds: Double) async -> Int {
        let running = stop()
        guard !running.isEmpty else { return 0 }
        let cancelled = Atomic<Int>(0)
        await ShutdownDeadline.bound(by: .seconds(seconds), { await self.untilNoneRuns() }, atDeadline: {
            for task in self.stop() { task.cancel() }
            cancelled.store(self.count, ordering: .relaxed)
        })
        return cancelled.load(ordering: .relaxed)
    }

    /// Starts nothing more, cancels every task started, and returns once they have ended,
    /// or after `seconds` with some still running (one that ignores its cancellation, deep
    /// in a call that cannot be cut short). Returns how many were still running then.
    @discardableResult
    public func cancelAndWait(upTo seconds: Double) async -> Int {
        let running = stop()
        guard !running.isEmpty else { return 0 }
        for task in running { task.cancel() }
        await ShutdownDeadline.bound(by: .seconds(seconds)) { await self.untilNoneRuns() }
        return count
    }

    /// Returns once no task runs, or once the caller is cancelled: a wait on a task that
    /// ignores its cancellation must not hold the caller's deadline (`ShutdownDeadline`).
    private func untilNoneRuns() async {
        let number = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            // A continuation: resumed once, by the last task to end, by the cancellation
            // below, or here when neither is to come.
            await withCheckedContinuation { waiter in
                let now = state.withLock { state -> Bool in
                    // A cancellation before this point has run its handler already.
                    if state.running.isEmpty || Task.isCancelled { return true }
                    state.waiting[number] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: number) }?.resume()
        }
    }

    @discardableResult
    private func stop() -> [Task<Void, Never>] {
        state.withLock { state in
            state.stopped = true
            return Array(state.running.values)
        }
    }
}
