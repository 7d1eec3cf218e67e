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

/// Exponential backoff with jitter, in the spirit of the Azure SDKs (5 s, 20 s, 80 s, then
/// the cap, `retry_max`): each failure multiplies the delay, and a random factor spreads out
/// many devices that failed together.
///
/// A backend's `Retry-After` only ever lengthens the wait: `Retry-After: 0` or a date in the
/// past (seen: 1,281 requests in 3 s) gets the usual backoff. It is honoured beyond
/// `maximum` (`retry_max`), up to `ceiling`, and a longer one is cut to that, which
/// `retryAfterNote` puts into words for `status`.
///
/// `maximum` bounds the waits after a backend answered with an error: it decides how late
/// a message goes out once the backend works again, since nothing else tells notifyd so.
/// A wait something else watches (a backend that could not be reached at all, which the
/// reachability probe watches; no route, which the network monitor watches) ends when the
/// watcher says so, so it may grow to `ceiling` without delaying anything: the longer
/// wait only spares requests that would fail.
public struct Backoff: Sendable, Equatable {
    public var initial: Double
    public var multiplier: Double
    public var maximum: Double

    /// The longest wait for a watched failure or a `Retry-After`, unless `maximum` is longer.
    public static let watchedMaximum: Double = 30 * 60

    public init(initial: Double = 5, multiplier: Double = 4, maximum: Double = 5 * 60) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
    }

    /// How long a watched wait or a `Retry-After` may be.
    public var ceiling: Double { max(maximum, Self.watchedMaximum) }

    /// The delay before retry number `failures` (1 after the first failure). `unit` is a
    /// random number in 0..<1; the delay lands between half and all of the exponential step,
    /// capped at `maximum` (at `ceiling` when `watched`), or at the backend's `retryAfter`
    /// when that is longer, and never past `ceiling`.
    public func delay(failures: Int, retryAfter: Double?, unit: Double, watched: Bool = false) -> Double {
        let exponent = Double(max(0, failures - 1))
        let step = min(watched ? ceiling : maximum, initial * pow(multiplier, exponent))
        let backoff = step * (0.5 + 0.5 * unit)
        guard let retryAfter, retryAfter > backoff else { return backoff }
        return min(retryAfter, ceiling)
    }

    /// Says so when the backend asked for a longer wait than notifyd allows.
    public func retryAfterNote(_ retryAfter: Double?) -> String? {
        guard let retryAfter, retryAfter > ceiling else { return nil }
        return Self.noteStart(retryAfter) + "\(Self.seconds(ceiling)))"
    }

    /// `text` with `retryAfterNote` after it in brackets, when there is one.
    func noted(_ text: String, retryAfter: Double?) -> String {
        retryAfterNote(retryAfter).map { text + " (\($0))" } ?? text
    }

    /// `text` from `noted` by an earlier backoff, noted by this one instead.
    func renamingCap(in text: String, retryAfter: Double?) -> String {
        guard let retryAfter, let earlier = text.ranges(of: " (" + Self.noteStart(retryAfter)).last else { return text }
        return noted(String(text[..<earlier.lowerBound]), retryAfter: retryAfter)
    }

    /// What a note says whatever the cap.
    private static func noteStart(_ retryAfter: Double) -> String {
        let asked = retryAfter < 1e15 ? seconds(retryAfter) : "practically forever"
        return "the backend asked to wait \(asked), capped at the larger of retry_max and 30 min ("
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : CFormat.string("%.3g s", value)
    }
}
