import Synchronization

/// The tasks a part starts on its own (a wake, a reply being produced), kept so that its
/// stop can wait for them, as a service group waits for its services: nothing it started
/// outlives it, and none starts once it stopped.
public final class TrackedTasks: Sendable {
    private struct State {
        var next = 0
        var running: [Int: Task<Void, Never>] = [:]
        var stopped = false
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
                _ = self.state.withLock { $0.running.removeValue(forKey: id) }
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
        for task in stop() { await task.value }
    }

    /// Starts nothing more, and returns once every task started has ended, or after
    /// `seconds` with those still running cancelled (a task that waits on something that
    /// will not come cannot hold a stop for longer). Returns how many were cancelled.
    @discardableResult
    public func stopAndWait(cancellingAfter seconds: Double) async -> Int {
        let running = stop()
        guard !running.isEmpty else { return 0 }
        return await awaitEnd(of: running, upTo: seconds) {
            for task in running { task.cancel() }
            return self.count
        }
    }

    /// Starts nothing more, cancels every task started, and returns once they have ended,
    /// or after `seconds` with some still running (one that ignores its cancellation, deep
    /// in a call that cannot be cut short). Returns how many were still running then.
    @discardableResult
    public func cancelAndWait(upTo seconds: Double) async -> Int {
        let running = stop()
        guard !running.isEmpty else { return 0 }
        for task in running { task.cancel() }
        return await awaitEnd(of: running, upTo: seconds) { self.count }
    }

    /// Waits until `running` have ended (0), or for `seconds`, whichever comes first: then
    /// what `atDeadline` returns.
    private func awaitEnd(of running: [Task<Void, Never>], upTo seconds: Double, atDeadline: @escaping @Sendable () -> Int) async -> Int {
        let outcome = FirstOutcome()
        // Two tasks racing to settle one outcome: the tasks' end, or the deadline; the
        // loser is cancelled once the winner has settled it.
        let ended = Task {
            for task in running { await task.value }
            outcome.settle(0)
        }
        // See above.
        let deadline = Task {
            try? await Task.sleep(for: .seconds(seconds))
            guard !Task.isCancelled else { return }
            outcome.settle(atDeadline())
        }
        let result = await outcome.value
        deadline.cancel()
        ended.cancel()
        return result
    }

    private func stop() -> [Task<Void, Never>] {
        state.withLock { state in
            state.stopped = true
            return Array(state.running.values)
        }
    }
}

/// The first of two answers, for whoever waits on it.
private final class FirstOutcome: Sendable {
    private let state = Mutex<(waiter: CheckedContinuation<Int, Never>?, value: Int?)>((nil, nil))

    func settle(_ value: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Int, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: Int {
        get async {
            // A continuation: `settle`, from whichever task ends first, resumes it once.
            await withCheckedContinuation { waiter in
                let settled = state.withLock { state -> Int? in
                    if state.value == nil { state.waiter = waiter }
                    return state.value
                }
                if let settled { waiter.resume(returning: settled) }
            }
        }
    }
}
