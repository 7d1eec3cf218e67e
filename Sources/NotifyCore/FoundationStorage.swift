import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Keeps Foundation's networking stores out of the user's home directory.
///
/// On Linux, the first `URLSessionConfiguration` creates `URLCache.shared` and
/// `HTTPCookieStorage.shared`, which create `$XDG_CACHE_HOME/org.swift.foundation.URLCache/
/// <program>` and `$XDG_DATA_HOME/<directory of the binary>` even when a session uses
/// neither (HTTPBackend sets both to nil). notifyd documents the only paths it writes, so
/// it creates these two once, with both variables pointing at a scratch directory that is
/// removed at once.
public enum FoundationStorage {
    /// Call once, early in `main`, before other threads read the environment: it sets
    /// two variables for a moment and puts them back.
    public static func keepOutOfHome() {
        #if canImport(FoundationNetworking)
        let scratch = NSTemporaryDirectory() + "notifyd-foundation-" + UUID().uuidString
        guard (try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)) != nil else { return }
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let names = ["XDG_CACHE_HOME", "XDG_DATA_HOME"]
        let saved: [(String, String?)] = names.map { name in (name, getenv(name).map { String(cString: $0) }) }
        for name in names { setenv(name, scratch, 1) }
        _ = URLCache.shared
        _ = HTTPCookieStorage.shared
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        #endif
    }
}
