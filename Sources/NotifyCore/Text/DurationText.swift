#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Durations as people write them in flags and config: `90`, `90s`, `15m`, `24h`, `7d`, `250ms`.
public enum DurationText {
    public static func parse(_ text: String) -> Double? {
        let trimmed = text.trimmingSpaces().lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            guard let value = Double(trimmed.dropLast(suffix.count)), value.isFinite, value >= 0 else { return nil }
            return value * factor
        }
        guard let value = Double(trimmed), value.isFinite, value >= 0 else { return nil }
        return value
    }
}
