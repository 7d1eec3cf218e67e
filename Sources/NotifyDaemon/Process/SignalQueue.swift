import Dispatch

/// Where the signal handlers run: a serial queue of their own. libdispatch runs a serial
/// queue on its overcommit threads, which its pool monitor does not watch; a handler on
/// the global queue would start that monitor, and with it a wake-up every second for the
/// rest of the daemon's life (see `ConcurrencyPool`).
enum SignalQueue {
    static let queue = DispatchQueue(label: "notifyd-signals")
}
