import Foundation

/// Exponential backoff with jitter, in the spirit of the Azure SDKs (about 10 s, 5 min,
/// 20 min): each failure multiplies the delay, capped, and a random factor spreads out
/// many devices that failed together.
public struct Backoff: Sendable, Equatable {
    public var initial: Double
    public var multiplier: Double
    public var maximum: Double
    /// The longest `Retry-After` honoured; a backend asking for a week is not waited on for a week.
    public var maximumRetryAfter: Double

    public init(initial: Double = 5, multiplier: Double = 4, maximum: Double = 30 * 60, maximumRetryAfter: Double = 6 * 3600) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// The delay before retry number `failures` (1 after the first failure). `unit` is a
    /// random number in 0..<1; the delay lands between half and all of the exponential step.
    public func delay(failures: Int, retryAfter: Double?, unit: Double) -> Double {
        if let retryAfter, retryAfter >= 0 {
            return min(retryAfter, maximumRetryAfter)
        }
        let exponent = Double(max(0, failures - 1))
        let step = min(maximum, initial * pow(multiplier, exponent))
        return step * (0.5 + 0.5 * unit)
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
