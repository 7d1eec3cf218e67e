#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The time now, read from the system's clock directly: `Date()` links a part of
/// FoundationEssentials that brings much of the rest into notifyctl with it, and the loader
/// relocates all of it at every start.
enum WallClock {
    static func now() -> Date {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
    }
}
