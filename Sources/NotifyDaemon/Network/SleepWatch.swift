/// Tells that the machine slept: CLOCK_BOOTTIME counts the time spent suspended and
/// CLOCK_MONOTONIC does not, so the distance between them grows by exactly that time.
/// The loop looks at each of its wake-ups, which a resume brings (the wall-clock timer of
/// `NetworkMonitor` is cancelled by it); a pure value, for the tests to drive.
struct SleepWatch {
    /// Shorter sleeps are not told: the two clocks are read one after the other.
    var threshold = 2.0
    private var distance: Double?

    /// Seconds slept since the last look, when that is at least `threshold`.
    mutating func look(boot: Double, monotonic: Double) -> Double? {
        let now = boot - monotonic
        defer { distance = now }
        guard let distance, now - distance >= threshold else { return nil }
        return now - distance
    }
}
