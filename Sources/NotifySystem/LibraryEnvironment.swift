#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Settings that libraries loaded by notifyd read only from the environment: notifyd sets
/// them for itself at start, and keeps them out of the programs it runs, which get the
/// environment notifyd was given.
public enum LibraryEnvironment {
    #if os(Linux)
    /// GnuTLS comes with the libraries libcurl needs (librtmp and libldap, for protocols
    /// notifyd turns off), and unless told otherwise initialises itself as it loads: about
    /// 110 KiB of heap and 1 MiB of pages kept for the daemon's life, for a library notifyd
    /// never calls. A libcurl built on GnuTLS initialises it itself in `curl_global_init`.
    static let settings: [(name: String, value: String)] = [("GNUTLS_NO_IMPLICIT_INIT", "1")]
    #else
    static let settings: [(name: String, value: String)] = []
    #endif

    /// The names `set` added: those the environment did not already have.
    private static let added = Mutex<Set<String>>([])

    /// Call first in `main`, before any thread starts: changing the environment while
    /// another thread reads it is undefined behaviour in C.
    public static func set() {
        for (name, value) in settings where getenv(name) == nil && setenv(name, value, 0) == 0 {
            added.withLock { _ = $0.insert(name) }
        }
    }

    /// This process's environment as `NAME=value` entries, without what `set` added.
    public static func forChildren() -> [String] {
        let added = added.withLock { $0 }
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            let name = text.prefix { $0 != "=" }
            if !added.contains(String(name)) { entries.append(text) }
            cursor += 1
        }
        return entries
    }
}
