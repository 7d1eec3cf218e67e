#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Time as the registration driver sees it; tests substitute one they move by hand.
public protocol WakeClock: Sendable {
    func now() -> Date
    /// Returns at `deadline` (or throws `CancellationError` when the task is cancelled).
    func sleep(until deadline: Date) async throws
}

/// Wall-clock dates, waited on with the continuous clock, which keeps counting while a
/// laptop sleeps, so a refresh due during suspend happens right after resume.
///
/// Seen with Swift 6.3.1 on Linux (strace): a sleep on `ContinuousClock` arms libdispatch's
/// timerfd on CLOCK_BOOTTIME, which counts suspended time and fires at resume when its
/// deadline passed meanwhile; one on `SuspendingClock` arms CLOCK_MONOTONIC, which stops
/// while suspended. On Darwin the continuous clock is mach_continuous_time, which counts
/// sleep too. The sleep's length is measured on the wall clock when it starts, so a wall
/// clock set meanwhile makes it wrong: notifyd then looks at its timers again
/// (`NetworkChange.clockSet`), as it does after a resume.
public struct SystemWakeClock: WakeClock {
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let delay = deadline.timeIntervalSinceNow
        if delay > 0 {
            try await Task.sleep(for: .seconds(delay), clock: .continuous)
        }
    }
}
