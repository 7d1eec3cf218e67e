#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySocket

/// Times for people: "in 4 s", "3 min ago", with the exact UTC time after.
enum TimeText {
    /// The time now (`wallClockSeconds`: not `Date()`, see there).
    static func now() -> Date {
        Date(timeIntervalSince1970: wallClockSeconds())
    }

    static func relative(_ date: Date, now: Date = TimeText.now()) -> String {
        let delta = date.timeIntervalSince(now)
        let magnitude = abs(delta)
        let amount: String
        switch magnitude {
        case ..<1: return "now"
        case ..<120: amount = "\(Int(magnitude)) s"
        case ..<7200: amount = "\(Int(magnitude / 60)) min"
        case ..<172_800: amount = "\(Int(magnitude / 3600)) h"
        default: amount = "\(Int(magnitude / 86400)) days"
        }
        return delta > 0 ? "in \(amount)" : "\(amount) ago"
    }

    static func stamped(_ date: Date) -> String {
        "\(WireDate.format(date)) (\(relative(date)))"
    }
}
