import Dispatch
import Synchronization
import NotifySystem

/// Runs one owner's blocking file work (write, fsync, rename, unlink) on a thread of its
/// own, one job at a time in the order they were handed over. An fsync can take tens of
/// milliseconds on a busy disk, and the Swift concurrency pool has one thread per core
/// (two here): two saves blocking it would stop every actor, and every command that asks
/// one (all but `ping`, which the socket loop answers).
/// The thread exists only while there is work: it starts with the first job of a burst and
/// ends shortly after the last, so an idle daemon keeps no thread for it.
final class FileWriter: Sendable {
    private struct Jobs {
        var waiting: [@Sendable () -> Void] = []
        var running = false
        /// The thread has run out of work and waits a moment for more before it ends.
        var lingering = false
    }

    private let name: String
    private let jobs = Mutex(Jobs())
    private let moreWork = DispatchSemaphore(value: 0)
    /// How long the thread waits for more work before it ends: a burst of sends hands over
    /// a removal every millisecond or so, and one thread should serve the whole burst, not
    /// one be started for most removals.
    private let linger: DispatchTimeInterval

    init(name: String, linger: DispatchTimeInterval = .milliseconds(100)) {
        self.name = name
        self.linger = linger
    }

    /// Hands `job` over and returns at once: it runs after every job handed over before it.
    func enqueue(_ job: @escaping @Sendable () -> Void) {
        let (start, wake) = jobs.withLock { jobs in
            jobs.waiting.append(job)
            if jobs.lingering {
                jobs.lingering = false
                return (false, true)
            }
            defer { jobs.running = true }
            return (!jobs.running, false)
        }
        if wake { moreWork.signal() }
        if start { NativeThread.start(name: name) { self.runJobs() } }
    }

    /// Runs `job` after every job handed over before it, and returns what it returned.
    func value<T: Sendable>(_ job: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            enqueue { continuation.resume(returning: job()) }
        }
    }

    /// Runs `job` after every job handed over before it; throws what it threw.
    func run(_ job: @escaping @Sendable () throws(CoreError) -> Void) async throws(CoreError) {
        let failure = await value { () -> CoreError? in
            do throws(CoreError) {
                try job()
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Returns once every job handed over so far has run.
    func drain() async {
        await value {}
    }

    private func runJobs() {
        while true {
            let batch = jobs.withLock { jobs in
                defer { jobs.waiting = [] }
                if jobs.waiting.isEmpty { jobs.lingering = true }
                return jobs.waiting
            }
            if !batch.isEmpty {
                for job in batch { job() }
                continue
            }
            // A signal left over from a wait that had already timed out only means one more look.
            if moreWork.wait(timeout: .now() + linger) == .success { continue }
            let end = jobs.withLock { jobs in
                jobs.lingering = false
                guard jobs.waiting.isEmpty else { return false }
                jobs.running = false
                return true
            }
            if end { return }
        }
    }
}
