import NotifyCore
import NotifyProtocol
import NotifySystem

/// The bounds that keep one client from slowing or endangering the others. Each has a
/// defined behaviour at its edge, documented in contrib/docs/protocol.md.
public struct ServerLimits: Sendable {
    /// Connections open at once. One more gets a `too_many_connections` error line and is
    /// closed. Also kept below the process's open-file limit.
    public var maximumConnections = 1024
    /// Descriptors the rest of the daemon may hold at once (backend connections, the
    /// outbox's files, a password command's pipes, the network monitor's two), kept out of
    /// the clients' share of the open-file limit.
    public var descriptorsForTheDaemon = 32
    /// Longest request line, newline excluded; a longer one gets `line_too_long` and the
    /// connection is closed, since the stream cannot be resynchronised.
    public var maximumLineLength = WireCoding.maximumLineLength
    /// Requests read but not yet answered on one connection; at the bound the connection
    /// is not read until replies go out.
    public var maximumRequestsInFlight = 128
    /// Unsent reply bytes at which a connection stops being read until it drains.
    public var outputHighWater = 1 << 20
    /// Unsent bytes beyond which a watcher's events are dropped and replaced by one
    /// `{"event":"overflow"}` line once it catches up.
    public var eventBacklog = 256 << 10
    /// Seconds a connection over `outputHighWater` may go without taking a byte before
    /// it is closed.
    public var drainTimeout: Double = 30
    /// Seconds pending replies get to go out at shutdown, and requests still being handled
    /// to end: the daemon's one shutdown deadline, shorter in tests.
    public var shutdownGrace: Double = ShutdownDeadline.seconds
    /// Refused connections are logged at most once per this many seconds per reason,
    /// with a count of the others.
    public var refusalLogInterval: Double = 10
    /// Seconds without socket activity after which the loop calls its `whenQuiet` once:
    /// the end of a burst, when the daemon gives back the memory the burst freed. Longer
    /// than libdispatch keeps an idle pool thread (5 s): a thread's malloc cache goes back to
    /// the heap only when the thread ends, and pins pages of it until then.
    public var quietPeriod: Double = 6

    public init() {}
}
