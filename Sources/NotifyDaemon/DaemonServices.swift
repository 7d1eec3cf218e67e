import NotifyCore

/// The daemon's own parts, as services of the group that starts and stops it with the
/// parts behind the socket (`Daemon.start`). The socket server has three places in that
/// order, one for each step of its stop.

/// Clients' connections accepted: started last, once what they ask of is up, and stopped
/// first, so that no command comes in while the rest stops.
final class AcceptingClients: Service {
    private let server: SocketServer
    init(_ server: SocketServer) { self.server = server }
    func start() async { server.start() }
    func shutdown() async { await server.stopAccepting() }
}

/// The connections open: closed once the parts behind them have stopped, after the replies
/// already owed have gone out (`ServerLimits.shutdownGrace`).
final class OpenConnections: Service {
    private let server: SocketServer
    init(_ server: SocketServer) { self.server = server }
    func start() async {}
    func shutdown() async { await server.closeConnections() }
}

/// The requests still being handled after their connection closed, cancelled at the grace.
final class RequestsUnderWay: Service {
    private let server: SocketServer
    init(_ server: SocketServer) { self.server = server }
    func start() async {}
    func shutdown() async { await server.finishRequests() }
}

/// The network monitor that runs by itself (macOS), or none: it reports nothing more once
/// the clients are gone, before the parts it would wake stop.
final class WatchedNetwork: Service {
    private let watch: (any NetworkWatch)?
    init(_ watch: (any NetworkWatch)?) { self.watch = watch }
    /// Started as it was made, before the socket server that may own it.
    func start() async {}
    func shutdown() async { watch?.stop() }
}
