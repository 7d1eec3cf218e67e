import NotifyCore

/// A network monitor that runs by itself rather than on the socket loop, stopped with the daemon.
protocol NetworkWatch: Sendable {
    func stop()
}

extension Daemon {
    /// Starts this platform's network monitor, reporting to `recovery`. On Linux it is read
    /// on the socket loop, which owns it from here on (`loop`); on macOS it runs on a queue
    /// of its own (`watch`); elsewhere there is none, and retries follow the backoff alone.
    func startNetworkWatch() -> (loop: NetworkMonitor?, watch: (any NetworkWatch)?) {
        let recovery = self.recovery, backend = self.backend
        let report = NetworkReport(changed: { recovery.networkChanged($0) }, defaultRoute: { recovery.defaultRouteChanged($0) },
                                   connectionsStale: { backend.networkChanged() })
        #if os(Linux)
        let monitor = NetworkMonitor(logger: logger, report: report)
        recovery.networkWatched(by: monitor.name)
        return (monitor, nil)
        #elseif canImport(Network)
        let monitor = PathMonitor(logger: logger, report: report)
        recovery.networkWatched(by: "path_monitor")
        monitor.start()
        return (nil, monitor)
        #else
        return (nil, nil)
        #endif
    }
}
