import NotifyCoding
import NotifyProtocol
import Synchronization

/// Fans events out to the connections that asked with `watch`. The socket server keeps
/// the watchers and their bounded backlogs; the hub encodes each event once, and not at
/// all while nobody watches, so publishers (the registrar, the outbox) never wait.
final class EventHub: Sendable {
    private let server = Mutex<SocketServer?>(nil)

    func attach(_ server: SocketServer?) {
        self.server.withLock { $0 = server }
    }

    func subscribe(_ connection: ConnectionHandle) {
        connection.server.watch(connection)
    }

    /// Work the socket did not see ended (deliveries after their senders had their
    /// answer): the loop's quiet moment, when memory goes back, comes after it too.
    func workEnded() {
        server.withLock { $0 }?.noteActivity()
    }

    func publish<Event: Encodable>(_ event: Event) {
        guard let server = server.withLock({ $0 }), server.hasWatchers else { return }
        guard let line = try? WireCoding.line(event) else { return }
        server.broadcast(Array(line))
    }
}
