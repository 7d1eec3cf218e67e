/// Runs one request line; the server calls it for each connection's lines in order:
/// `read`, then `joinsBatch` of what it read, then `handle`.
protocol RequestHandler: Sendable {
    /// A line as read (parsed, its command looked up), before it runs.
    associatedtype Request: Sendable
    func read(_ line: [UInt8]) -> Request
    func handle(_ request: Request, from connection: ConnectionHandle) async -> Reply
    /// The reply to a line that needs no actor and no waiting (`ping`), made on the loop
    /// thread at once; nil sends the line to `handle`. Must be quick: every connection
    /// waits while it runs. `afterRunningCommands`: earlier requests on the connection
    /// are still running, so a reply about the daemon's state must wait for them.
    func immediateReply(to line: [UInt8], afterRunningCommands: Bool) -> [UInt8]?
    /// True when handling `request` only hands work over, at once (a send, to the outbox):
    /// the waits of the requests read before it may then start after it, so that the
    /// sends of one read share one write to disk. Before any other request they start
    /// first, whatever it waits for in its handling.
    func joinsBatch(_ request: Request) -> Bool
}

extension RequestHandler {
    func immediateReply(to line: [UInt8], afterRunningCommands: Bool) -> [UInt8]? { nil }
    func joinsBatch(_ request: Request) -> Bool { false }
}

extension RequestHandler where Request == [UInt8] {
    func read(_ line: [UInt8]) -> [UInt8] { line }
}

/// What a command may know of the connection it came on.
struct ConnectionHandle: Sendable {
    let number: Int
    let server: SocketServer
}
