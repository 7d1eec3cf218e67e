import NotifySystem

/// For tests that generate their inputs from a seed, so a failure comes back on the next run.
extension SplitMix64 {
    /// A number from 0 to `count` - 1.
    public mutating func below(_ count: Int) -> Int { Int(next() % UInt64(count)) }
}
