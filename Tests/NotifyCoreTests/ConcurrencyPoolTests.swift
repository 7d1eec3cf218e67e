#if os(Linux) && compiler(>=6.3) && compiler(<6.4)
import Foundation
import NotifySystem
import Testing

/// notifyd's own threads for Swift concurrency (`ConcurrencyPool`), used here as a task's
/// preferred executor: its jobs and its sleeps, on both clocks, never on libdispatch's pool.
@Suite(.timeLimit(.minutes(1))) struct ConcurrencyPoolTests {
    static let pool = ConcurrencyPool(name: "pool-tests", timerName: "pool-tests-time", width: 2)

    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func jobsRunOnThePoolsThreadsAndNoMoreThanItsWidth() async {
        let names = await withTaskExecutorPreference(Self.pool) {
            await withTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { Self.threadName() } }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        #expect(Set(names) == ["pool-tests"], "\(Set(names))")
        #expect(Self.pool.threadsStarted <= Self.pool.width)
        #expect(Self.pool.threadsStarted >= 1)
    }

    @Test(arguments: [false, true])
    func aSleepEndsAtItsDeadlineOnThePoolsTimerThread(continuous: Bool) async throws {
        let (slept, name) = try await withTaskExecutorPreference(Self.pool) {
            if continuous {
                let start = ContinuousClock.now
                try await Task.sleep(for: .milliseconds(30), clock: .continuous)
                return (start.duration(to: .now), Self.threadName())
            }
            let start = SuspendingClock.now
            try await Task.sleep(for: .milliseconds(30), clock: .suspending)
            return (start.duration(to: .now), Self.threadName())
        }
        #expect(slept >= .milliseconds(30), "never before its deadline")
        #expect(name == "pool-tests", "resumed on the pool")
        #expect(Self.threadNames().contains("pool-tests-time"), "the pool's own timer thread waited: \(Self.threadNames())")
    }

    /// The timer thread waits for the earliest deadline: one set after a later one moves it.
    @Test func aShortSleepSetAfterALongOneEndsFirst() async throws {
        let pool = ConcurrencyPool(name: "pool-order", timerName: "pool-order-time", width: 2)
        try await withTaskExecutorPreference(pool) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Task.sleep(for: .seconds(3600)) }
                // Set, and the timer thread waiting for it.
                while pool.timersPending == 0 || pool.timerPasses == 0 { await Task.yield() }
                // The sleep under test, not a wait: its end is the event. Were the timer thread
                // still waiting for the hour, it would not end, and the time limit fails the test.
                try await Task.sleep(for: .milliseconds(10))
                #expect(pool.timersPending == 1, "the long sleep still waits")
                group.cancelAll()
                await #expect(throws: CancellationError.self) { try await group.next() }
            }
        }
    }

    /// A sleep of centuries is a sleep of centuries: its deadline, the clock's time now plus
    /// the delay, does not wrap round to a time already past.
    @Test func aSleepAlmostAsLongAsTheClockCanCountStillWaits() async throws {
        let pool = ConcurrencyPool(name: "pool-long", timerName: "pool-long-time", width: 2)
        try await withTaskExecutorPreference(pool) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Within three seconds of the most nanoseconds an Int64 holds: added to the
                // machine's time since boot, more than that.
                group.addTask { try await Task.sleep(for: .seconds(Int64.max / 1_000_000_000 - 2), clock: .continuous) }
                // Set (the timer thread starts with the first sleep).
                while pool.timersPending == 0 && pool.timerPasses == 0 { await Task.yield() }
                // The pass that ends this sleep looks at the long one too, and ends a deadline
                // already past first: a wrapped one is gone by the time this sleep ends.
                try await Task.sleep(for: .milliseconds(1), clock: .continuous)
                #expect(pool.timersPending == 1, "the long sleep still waits")
                group.cancelAll()
                await #expect(throws: CancellationError.self) { try await group.next() }
            }
        }
    }
}
#endif
