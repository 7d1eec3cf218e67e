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
public struct SystemWakeClock: WakeClock {
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let delay = deadline.timeIntervalSinceNow
        if delay > 0 {
            try await Task.sleep(for: .seconds(delay))
        }
    }
}
