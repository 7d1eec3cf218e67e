/// Runs one request line; the server calls it for each connection's lines in order.
protocol RequestHandler: Sendable {
    func handle(_ line: [UInt8], from connection: ConnectionHandle) async -> Reply
    /// The reply to a line that needs no actor and no waiting (`ping`), made on the loop
    /// thread at once; nil sends the line to `handle`. Must be quick: every connection
    /// waits while it runs. `afterRunningCommands`: earlier requests on the connection
    /// are still running, so a reply about the daemon's state must wait for them.
    func immediateReply(to line: [UInt8], afterRunningCommands: Bool) -> [UInt8]?
    /// True when handling `line` only hands work over, at once (a send, to the outbox):
    /// the waits of the requests read before it may then start after it, so that the
    /// sends of one read share one write to disk. Before any other line they start first,
    /// whatever it waits for in its handling.
    func joinsBatch(_ line: [UInt8]) -> Bool
}

extension RequestHandler {
    func immediateReply(to line: [UInt8], afterRunningCommands: Bool) -> [UInt8]? { nil }
    func joinsBatch(_ line: [UInt8]) -> Bool { false }
}

/// What a command may know of the connection it came on.
struct ConnectionHandle: Sendable {
    let number: Int
    let server: SocketServer
}
