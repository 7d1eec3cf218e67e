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
    private struct State {
        var received: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
    }

    private static let state = Mutex(State())
    // The sources must live as long as the process. Unsafe is fine: only `install`
    // writes the array, once, from `main`, and nothing reads it.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// Ignores SIGPIPE (a client that hangs up must never kill the daemon) and starts
    /// catching SIGTERM/SIGINT. Call once, before anything else, so that a signal sent
    /// while the daemon starts up is not lost.
    public static func install() {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: SignalQueue.queue)
            source.setEventHandler { received(number) }
            source.resume()
            sources.append(source)
        }
    }

    /// Returns the first of SIGTERM or SIGINT to arrive (at once if one already has).
    public static func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let already = state.withLock { state -> Int32? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let already { continuation.resume(returning: already) }
        }
    }

    /// `notifyctl stop`: shuts down exactly as SIGTERM would.
    public static func requestStop() {
        received(SIGTERM)
    }

    private static func received(_ number: Int32) {
        let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            guard state.received == nil else { return nil }
            state.received = number
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: number)
    }
}
