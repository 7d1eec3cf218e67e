import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGHUP reloads the configuration, as it does for sshd and most daemons, instead of
/// ending the process (its default action).
public enum ReloadSignal {
    // Kept for the life of the process. Unsafe is fine: only `install` writes it, once, from `main`.
    nonisolated(unsafe) private static var source: (any DispatchSourceSignal)?

    public static func install(_ handler: @escaping @Sendable () -> Void) {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: SignalQueue.queue)
        source.setEventHandler(handler: handler)
        source.resume()
        self.source = source
    }
}
