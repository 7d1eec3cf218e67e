import NotifySystem

/// Runs blocking client I/O on its own thread, for callers inside Swift concurrency
/// (whose few shared threads must never block on a socket).
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await NativeThread.run(name: "notifyctl-call") { Result { try body() } }.get()
}
