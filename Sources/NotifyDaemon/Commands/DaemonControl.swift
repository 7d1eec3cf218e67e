import NotifyProtocol
import Synchronization

/// What the control commands reach beyond the router: stopping the daemon the way a
/// signal does, reloading its configuration, and what the last reload could not apply.
final class DaemonControl: Sendable {
    let requestStop: @Sendable () -> Void
    let reload: @Sendable () async -> ReloadResult
    private let waiting = Mutex<[String]>([])

    init(requestStop: @escaping @Sendable () -> Void, reload: @escaping @Sendable () async -> ReloadResult) {
        self.requestStop = requestStop
        self.reload = reload
    }

    /// The changed settings that take effect only when notifyd starts again, for `status`.
    var restartNeeded: [String] {
        get { waiting.withLock { $0 } }
        set { waiting.withLock { $0 = newValue } }
    }
}
