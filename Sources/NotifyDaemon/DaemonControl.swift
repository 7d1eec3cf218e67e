import NotifyProtocol
import Synchronization

/// What the control commands reach beyond the router: stopping the daemon the way a
/// signal does, reloading its configuration, and the settings that reloading may change.
final class DaemonControl: Sendable {
    let requestStop: @Sendable () -> Void
    let reload: @Sendable () async -> ReloadResult
    private let platforms: Mutex<[Platform]>

    init(sendPlatforms: [Platform], requestStop: @escaping @Sendable () -> Void, reload: @escaping @Sendable () async -> ReloadResult) {
        self.platforms = Mutex(sendPlatforms)
        self.requestStop = requestStop
        self.reload = reload
    }

    /// `send_platforms`, which a reload may change.
    var sendPlatforms: [Platform] {
        get { platforms.withLock { $0 } }
        set { platforms.withLock { $0 = newValue } }
    }
}
