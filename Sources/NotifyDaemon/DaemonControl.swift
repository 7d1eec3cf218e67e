import NotifyProtocol

/// What the control commands reach beyond the router: stopping the daemon the way a
/// signal does, and reloading its configuration.
final class DaemonControl: Sendable {
    let requestStop: @Sendable () -> Void
    let reload: @Sendable () async -> ReloadResult

    init(requestStop: @escaping @Sendable () -> Void, reload: @escaping @Sendable () async -> ReloadResult) {
        self.requestStop = requestStop
        self.reload = reload
    }
}
