import NotifySystem

/// Runs `body` on a thread of its own and hands back what it returns.
///
/// For test work that runs for long without suspending: a fuzz loop, a sweep over
/// centuries of dates, a generated corpus. The tests run side by side on Swift's shared
/// concurrency pool, which has one thread per core (two on a small CI machine) and cannot
/// take a thread back from work that never suspends; seconds of such work on it stall
/// every other test's tasks, the product's own among them, for as long. A thread of its
/// own is scheduled by the kernel beside them instead.
///
/// `#expect` belongs to the test's task: have `body` return what it found and check that.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await NativeThread.run(name: "test-off-pool") { Result { try body() } }.get()
}
