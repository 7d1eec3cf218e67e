import Foundation

/// A value shared between the accept thread, the connection threads and callers
/// of the inspection API.
///
/// An `NSLock` rather than `Synchronization.Mutex`: on Darwin `Mutex` needs macOS 15
/// while the package supports macOS 14, and on Linux the thread sanitizer cannot see a
/// contended `Mutex` being handed over (the kernel does it), so it reported every access
/// under one as a race.
// Safe because `value` is only ever touched inside `lock.lock()`/`unlock()`.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result: Sendable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
