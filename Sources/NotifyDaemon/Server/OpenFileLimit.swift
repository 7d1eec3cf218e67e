#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The open-file limit bounds how many clients can connect. Many systems start processes
/// with a soft limit of 1024 and a far higher hard one; like most servers, notifyd raises
/// its soft limit as far as it may (to at most 65536, all it could use).
enum OpenFileLimit {
    /// Raises the soft limit and returns the limit now in force.
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(resourceNoFile, &limit) == 0 else { return 1024 }
        let wanted = min(limit.rlim_max, 65536)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            #if canImport(Darwin)
            // macOS refuses more than OPEN_MAX for the soft limit.
            raised.rlim_cur = min(wanted, rlim_t(OPEN_MAX))
            #endif
            if setrlimit(resourceNoFile, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Below this many client connections at once, notifyd says at start that its limit is
    /// too low: one `notifyctl watch` could then keep other commands out.
    static let fewClients = 64

    /// How many clients may connect under `limit` while the daemon keeps `kept` for itself
    /// (at least one, so a client can always be told why it waits).
    static func clientShare(of limit: Int, wanted: Int, keeping kept: Int) -> Int {
        max(1, min(wanted, limit - kept))
    }

    #if canImport(Glibc)
    private static let resourceNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNoFile = RLIMIT_NOFILE
    #endif
}
