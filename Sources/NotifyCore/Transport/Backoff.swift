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

/// Exponential backoff with jitter, in the spirit of the Azure SDKs (about 10 s, 5 min,
/// 20 min): each failure multiplies the delay, capped, and a random factor spreads out
/// many devices that failed together.
///
/// A backend's `Retry-After` only ever lengthens the wait: `Retry-After: 0` or a date in the
/// past (seen: 1,281 requests in 3 s) gets the usual backoff, and a wait longer than
/// `maximum` (`retry_max`) is cut to it, which `retryAfterNote` puts into words for `status`.
public struct Backoff: Sendable, Equatable {
    public var initial: Double
    public var multiplier: Double
    public var maximum: Double

    public init(initial: Double = 5, multiplier: Double = 4, maximum: Double = 30 * 60) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
    }

    /// The delay before retry number `failures` (1 after the first failure). `unit` is a
    /// random number in 0..<1; the delay lands between half and all of the exponential step,
    /// or at the backend's `retryAfter` when that is longer, and never past `maximum`.
    public func delay(failures: Int, retryAfter: Double?, unit: Double) -> Double {
        let exponent = Double(max(0, failures - 1))
        let step = min(maximum, initial * pow(multiplier, exponent))
        let backoff = step * (0.5 + 0.5 * unit)
        guard let retryAfter, retryAfter > backoff else { return backoff }
        return min(retryAfter, maximum)
    }

    /// Says so when the backend asked for a longer wait than `retry_max` allows.
    public func retryAfterNote(_ retryAfter: Double?) -> String? {
        guard let retryAfter, retryAfter > maximum else { return nil }
        return Self.noteStart(retryAfter) + "\(Self.seconds(maximum)))"
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
        return "the backend asked to wait \(asked), capped at retry_max ("
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : CFormat.string("%.3g s", value)
    }
}

/// A tiny deterministic random generator, so the state machine stays a pure value that
/// tests can replay.
public struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
