import Dispatch
import Foundation
import NotifyProtocol
import Synchronization

/// Fans events out to the connections that asked with `watch`.
///
/// Writes happen on a serial queue of their own, in order, so whoever publishes (the
/// registrar, the outbox) never waits on a watcher that stopped reading; such a watcher is
/// dropped once its send timeout runs out.
final class EventHub: Sendable {
    private let watchers = Mutex<[Int: Connection]>([:])
    private let writer = DispatchQueue(label: "notifyd.events")

    func subscribe(_ connection: Connection) {
        watchers.withLock { $0[connection.number] = connection }
    }

    func unsubscribe(_ connection: Connection) {
        _ = watchers.withLock { $0.removeValue(forKey: connection.number) }
    }

    /// Encodes once and writes the line to every watcher; a watcher that cannot take it is dropped.
    func publish<Event: Encodable>(_ event: Event) {
        guard let line = try? WireCoding.line(event) else { return }
        let bytes = Array(line)
        let current = watchers.withLock { Array($0.values) }
        guard !current.isEmpty else { return }
        writer.async { [self] in
            for connection in current where !connection.send(bytes) {
                unsubscribe(connection)
            }
        }
    }
}
