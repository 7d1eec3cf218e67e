import NotifyCore

extension Daemon {
    /// The network monitor of this platform, reporting to `recovery`. On Linux it is read
    /// on the socket loop, which owns it from here on; elsewhere nil.
    func makeNetworkMonitor() -> NetworkMonitor? {
        #if os(Linux)
        let recovery = self.recovery, backend = self.backend
        let report = NetworkReport(changed: { recovery.networkChanged($0) }, defaultRoute: { recovery.defaultRouteChanged($0) },
                                   connectionsStale: { backend.networkChanged() })
        let monitor = NetworkMonitor(logger: logger, report: report)
        recovery.networkWatched(by: monitor.name)
        return monitor
        #else
        return nil
        #endif
    }
}
