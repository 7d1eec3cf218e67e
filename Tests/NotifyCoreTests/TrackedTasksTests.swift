import Foundation
import NotifyProtocol
import NotifySystem
import NotifyTestSupport
import Synchronization
import Testing
@testable import NotifyCore

/// What a part starts on its own ends before its stop returns, and nothing starts after.
struct TrackedTasksTests {
    /// A gate a task waits at until the test opens it.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        func wait() async {
            await withCheckedContinuation { waiter in
                let now = state.withLock { state -> Bool in
                    if !state.open { state.waiting.append(waiter) }
                    return state.open
                }
                if now { waiter.resume() }
            }
        }
        func open() {
            for waiter in state.withLock({ state -> [CheckedContinuation<Void, Never>] in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }) { waiter.resume() }
        }
    }

    /// What `wait` returned, or nil when it has not returned in 10 s: a wait that never
    /// ends fails the test instead of holding it.
    static func returned(_ wait: @escaping @Sendable () async -> Int) async -> Int? {
        let result = Mutex<Int?>(nil)
        Task {
            let value = await wait()
            result.withLock { $0 = value }
        }
        _ = await eventually { result.withLock { $0 } != nil }
        return result.withLock { $0 }
    }

    @Test func aStopWaitsForWhatRunsAndStartsNothingAfter() async throws {
        let tasks = TrackedTasks(), gate = Gate(), ended = Atomic<Int>(0)
        for _ in 0..<3 {
            #expect(tasks.start { await gate.wait(); ended.add(1, ordering: .relaxed) })
        }
        let stopped = Task { await tasks.stopAndWait() }
        #expect(await eventually { tasks.isStopping })
        #expect(ended.load(ordering: .relaxed) == 0)
        #expect(!tasks.start { ended.add(100, ordering: .relaxed) }, "nothing starts once stopping")
        gate.open()
        await stopped.value
        #expect(ended.load(ordering: .relaxed) == 3, "all three ended before the stop returned")
        #expect(tasks.count == 0)
        #expect(tasks.started == 3, "the stop's wait is not a task started")
    }

    /// A task waiting on something that never comes holds the stop for the bound only,
    /// and is cancelled.
    @Test func aTaskThatNeverEndsIsCancelledAtTheBound() async throws {
        let tasks = TrackedTasks(), gate = Gate(), sawCancellation = Atomic<Bool>(false)
        tasks.start {
            // Ends only once the test opens the gate, after the stop: it saw its cancellation then.
            await gate.wait()
            sawCancellation.store(Task.isCancelled, ordering: .relaxed)
        }
        let cancelled = await Self.returned { await tasks.stopAndWait(cancellingAfter: 0.1) }
        #expect(cancelled == 1)
        gate.open()
        #expect(await eventually { sawCancellation.load(ordering: .relaxed) })
    }

    /// A task that ignores its cancellation holds `cancelAndWait` for the bound only, and
    /// is counted as still running then.
    @Test func aTaskThatIgnoresItsCancellationHoldsTheWaitForTheBoundOnly() async throws {
        let tasks = TrackedTasks(), gate = Gate(), ended = Atomic<Int>(0)
        tasks.start { await gate.wait(); ended.add(1, ordering: .relaxed) }
        tasks.start { ended.add(1, ordering: .relaxed) }
        #expect(await eventually { ended.load(ordering: .relaxed) == 1 })
        #expect(await Self.returned { await tasks.cancelAndWait(upTo: 0.1) } == 1)
        gate.open()
        #expect(await eventually { tasks.count == 0 })
        #expect(await Self.returned { await tasks.cancelAndWait(upTo: 0.1) } == 0, "nothing runs: at once")
    }

    /// A caller cancelled while it waits (the deadline of a stop around it passed) is let
    /// go at once, whatever the tasks do.
    @Test func aCancelledCallerStopsWaitingAtOnce() async throws {
        let tasks = TrackedTasks(), gate = Gate(), waitEnded = Atomic<Bool>(false)
        tasks.start { await gate.wait() }
        let waiting = Task {
            await tasks.stopAndWait()
            waitEnded.store(true, ordering: .relaxed)
        }
        #expect(await eventually { tasks.isStopping })
        waiting.cancel()
        #expect(await eventually { waitEnded.load(ordering: .relaxed) })
        #expect(tasks.count == 1, "the task still runs: only the wait ended")
        gate.open()
        #expect(await eventually { tasks.count == 0 })
    }

    /// Once the recovery is stopped (the daemon's stop, first), a backend's answer or a
    /// network change wakes no part any more.
    @Test func aStoppedRecoveryWakesNothing() async throws {
        let recovery = BackendRecovery()
        let wakes = Atomic<Int>(0)
        recovery.attach(.outbox, wake: { _ in wakes.add(1, ordering: .relaxed) }, networkChanged: { _ in wakes.add(1, ordering: .relaxed) })
        recovery.setWaiting(.outbox, true)
        recovery.backendAnswered("https://b.example")
        #expect(await eventually { wakes.load(ordering: .relaxed) == 1 })
        await recovery.shutdown()
        let started = recovery.wakes.started
        recovery.backendAnswered("https://b.example")
        recovery.networkChanged(.up)
        // A wake starts within the call or not at all.
        #expect(recovery.wakes.started == started, "a wake started after the stop")
        #expect(wakes.load(ordering: .relaxed) == 1)
    }
}
