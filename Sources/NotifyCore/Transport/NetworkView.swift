#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What changed in the network, as a monitor reports it once a burst of its messages is over.
public enum NetworkChange: Sendable, Equatable {
    /// A link, an address or a default route came up: connectivity may be back.
    case up
    /// A link, an address or a default route went away, and none came up: nothing to retry.
    case down
    /// The machine slept this many seconds and woke up.
    case resumed(slept: Double)
    /// The wall clock was set (by NTP, or by hand).
    case clockSet
}

/// What the network monitor has seen, for judging a failed request that the network may
/// explain (`BackendCallError.unreachable`).
struct NetworkView: Sendable, Equatable {
    /// The monitor's name; nil while there is none, and then no failure is judged offline:
    /// with nothing to say when the network is back, retries follow the backoff.
    var monitor: String?
    /// Whether a default route that can carry packets exists; nil while the monitor does not know.
    var defaultRoute: Bool?

    /// True when a request to `backend` that failed so failed because this machine is
    /// offline: the system said there is no route (`noRoute`), or the name could not be
    /// resolved or the backend did not answer in time while there is no default route. A
    /// backend on this machine is never offline.
    func isOffline(reaching backend: String, noRoute: Bool) -> Bool {
        guard monitor != nil, let host = URL(string: backend)?.host, !BackendURL.isLoopback(host) else { return false }
        return noRoute || defaultRoute == false
    }
}
