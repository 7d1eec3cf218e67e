import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGTERM and SIGINT as something to await, so `main` can shut down in order instead of
/// dying inside a signal handler.
public enum ShutdownSignals {
    /// The signals as they come: the first is kept until `wait` takes it, later ones dropped.
    private static let arrivals = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingOldest(1))
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
        var signals = arrivals.stream.makeAsyncIterator()
        return await signals.next() ?? SIGTERM
    }

    /// `notifyctl stop`: shuts down exactly as SIGTERM would.
    public static func requestStop() {
        received(SIGTERM)
    }

    private static func received(_ number: Int32) {
        arrivals.continuation.yield(number)
    }
}
