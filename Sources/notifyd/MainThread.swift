import Dispatch

/// Where the main thread spends the daemon's life.
///
/// With `await` at the top level of `main.swift`, Swift hands the main thread to
/// `dispatch_main()`, which ends it with `pthread_exit`. On Linux, glibc unwinds its stack
/// for that: it loads libgcc_s and maps the executable's unwind tables, 1.0-1.4 MiB of
/// memory nothing uses afterwards, kept for the daemon's whole life. So the daemon runs on
/// the concurrency pool instead, and the main thread sleeps until the process exits.
enum MainThread {
    /// Runs `life`, which ends the process, and parks the calling thread until it does.
    /// Nothing may need the main actor meanwhile: its queue is never drained.
    static func park(whileRunning life: @escaping @Sendable () async -> Never) -> Never {
        Task.detached { await life() }
        let never = DispatchSemaphore(value: 0)
        // Nothing signals it; the loop only tells the compiler this never returns.
        while true { never.wait() }
    }
}
