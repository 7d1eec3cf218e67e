import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGTERM and SIGINT as something to await, so `main` can shut down in order instead of
/// dying inside a signal handler.
public enum ShutdownSignals {
    /// Ignores SIGPIPE (a client that hangs up must never kill the daemon) and routes
    /// SIGTERM/SIGINT to `wait`. Call once, early.
    public static func install() {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
    }

    /// Returns the first of SIGTERM or SIGINT to arrive.
    public static func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let resumed = Mutex(false)
            let sources = [SIGTERM, SIGINT].map { number in
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    let first = resumed.withLock { done in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(returning: number) }
                }
                source.resume()
                return source
            }
            keepAlive.append(contentsOf: sources)
        }
    }

    // The sources must outlive `wait`. Unsafe is fine: only `main` calls `wait`, once,
    // and nothing reads the array.
    nonisolated(unsafe) private static var keepAlive: [any DispatchSourceSignal] = []
}
