#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Closes a descriptor this code owns, once. Never retried on EINTR: on Linux the
/// descriptor is released by then, and a second close could hit one another thread
/// opened meanwhile under the same number (`contrib/tests/descriptors` checks for that).
public func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
