#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Durations as people write them in notifyd's flags and config and notifyctl's options:
/// `90`, `90s`, `15m`, `24h`, `7d`, `250ms`.
public enum DurationText {
    public static func parse(_ text: String) -> Double? {
        // One word, spaces around it allowed.
        let words = text.split { $0.isWhitespace && !$0.isNewline }
        guard words.count == 1 else { return nil }
        let trimmed = words[0].lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            guard let value = Double(trimmed.dropLast(suffix.count)), value.isFinite, value >= 0 else { return nil }
            return value * factor
        }
        guard let value = Double(trimmed), value.isFinite, value >= 0 else { return nil }
        return value
    }
}
