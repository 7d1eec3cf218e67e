import Synchronization

/// Runs one owner's blocking file work (write, fsync, rename, unlink) on a thread of its
/// own, one job at a time in the order they were handed over. An fsync can take tens of
/// milliseconds on a busy disk, and the Swift concurrency pool has one thread per core
/// (two here): two saves blocking it would stop every actor, and every `ping` with them.
/// The thread exists only while there is work: it starts with the first job of a burst and
/// ends once none is left, so an idle daemon keeps no thread for it.
final class FileWriter: Sendable {
    private let name: String
    private let jobs = Mutex<(waiting: [@Sendable () -> Void], running: Bool)>(([], false))

    init(name: String) {
        self.name = name
    }

    /// Hands `job` over and returns at once: it runs after every job handed over before it.
    func enqueue(_ job: @escaping @Sendable () -> Void) {
        let start = jobs.withLock { jobs in
            jobs.waiting.append(job)
            defer { jobs.running = true }
            return !jobs.running
        }
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
                if jobs.waiting.isEmpty { jobs.running = false }
                return jobs.waiting
            }
            if batch.isEmpty { return }
            for job in batch { job() }
        }
    }
}
