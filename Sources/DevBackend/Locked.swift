#if canImport(Darwin)
import Foundation
#else
import Synchronization
#endif

/// A value shared between the accept thread, the connection threads and callers
/// of the inspection API.
///
/// On Linux this is a `Synchronization.Mutex`. On Darwin `Mutex` needs macOS 15
/// while the package supports macOS 14, so there it falls back to `NSLock`.
#if canImport(Darwin)
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
#else
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<Result: Sendable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try mutex.withLock { (value: inout sending Value) throws(Failure) -> Result in
            try body(&value)
        }
    }
}
#endif
