#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyCore
import NotifyProtocol
import NotifySocket
import Synchronization

/// notifyd: the registration agent behind the control socket. `start` binds and serves;
/// `stop` stops accepting, lets in-flight work finish briefly, saves state and removes
/// the socket. Used by `main` and, in-process, by the tests.
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    public let registrar: Registrar
    public let outbox: Outbox
    /// What waits on the backend and the network, and what is known of the network.
    public let recovery: BackendRecovery
    /// The HTTP client both use, told when the network changed.
    let backend: any BackendAPI
    let logger: Logger
    private let hub: EventHub
    private let running: Running
    private let control: DaemonControl
    /// The settings a reload compares with: those read at start, or at the last reload.
    private let settingsInEffect: Mutex<ResolvedSettings?>

    /// What exists only between `start` and `stop`.
    private final class Running: @unchecked Sendable {
        // Safe: written once in `start` and read in `stop`, which callers never run concurrently
        // (main and the tests call them in sequence).
        var server: SocketServer?
        var socket: ListeningSocket?
        var lock: StateDirectoryLock?
        var networkWatch: (any NetworkWatch)?
    }

    public init(configuration: DaemonConfiguration, backend: (any BackendAPI)? = nil, clock: any WakeClock = SystemWakeClock(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let hub = EventHub()
        self.hub = hub
        self.running = Running()
        self.settingsInEffect = Mutex(configuration.settingsSource?.current)
        let reloadBox = ReloadTarget()
        self.control = DaemonControl(sendPlatforms: configuration.sendPlatforms, requestStop: configuration.requestStop,
                                     reload: { await reloadBox.daemon?.reload() ?? ReloadResult(config: "", applied: [], restartNeeded: [], problems: ["notifyd is stopping"]) })
        // One HTTP client for both, so registrations and sends share its reused connections.
        let backend = backend ?? HTTPBackend(
            requestTimeout: configuration.requestTimeout, maximumConnections: configuration.outbox.concurrency, allowInsecureHTTP: configuration.allowInsecureHTTP)
        self.backend = backend
        // One owner of the login, asked by both the registrar and the outbox.
        let accounts = AccountKeeper(stateDirectory: configuration.stateDirectory, configuredBackend: configuration.backend,
                                     passwords: PasswordProvider(source: configuration.passwordSource))
        // A backend that answers either of them ends what waits on it in both; so does a
        // network that comes back.
        let recovery = BackendRecovery(statusChanges: accounts.statusChanges, onEvent: { hub.publish($0) })
        self.recovery = recovery
        let outbox = Outbox(
            settings: configuration.outbox, stateDirectory: configuration.stateDirectory, backend: backend, clock: clock, logger: logger,
            accounts: accounts, recovery: recovery, onEvent: { delivery in hub.publish(SendEvent(time: Date(), delivery: delivery)) },
            onEmptied: { hub.workEnded() })
        self.outbox = outbox
        self.registrar = Registrar(
            settings: .init(configuredBackend: configuration.backend, policy: configuration.policy,
                            defaultPlatform: configuration.platform, androidName: configuration.outbox.androidName,
                            allowInsecureHTTP: configuration.allowInsecureHTTP),
            stateDirectory: configuration.stateDirectory, backend: backend, accounts: accounts, clock: clock, logger: logger, recovery: recovery,
            onStatus: { status in hub.publish(RegistrationEvent(time: Date(), registration: status)) },
            onAccountChange: { await outbox.accountChanged() })
        let registrar = self.registrar
        recovery.attach(.outbox, wake: { await outbox.backendWorks($0) }, networkChanged: { await outbox.networkChanged($0) })
        recovery.attach(.registrar, wake: { await registrar.backendWorks($0) }, networkChanged: { await registrar.networkChanged($0) })
        reloadBox.daemon = self
    }

    public func start() async throws(DaemonError) {
        do {
            try AtomicFile.ensureDirectory(configuration.stateDirectory)
        } catch {
            throw .startup(error.description)
        }
        try StateDirectoryCheck.run(configuration.stateDirectory)
        let lock = try StateDirectoryLock(directory: configuration.stateDirectory)
        removeStaleTemporaries()
        let socket: ListeningSocket
        if let activated = configuration.activatedListener {
            socket = ListeningSocket.adopt(activated, fallbackPath: configuration.socket.path)
        } else {
            do {
                socket = try ListeningSocket.bind(configuration.socket, logger: logger)
            } catch {
                lock.release()
                throw error
            }
        }
        if let warning = configuration.socket.warning, !socket.activated { logger.warning(warning) }
        let info = DaemonInfo(pid: getpid(), socketPath: socket.path, stateDirectory: configuration.stateDirectory, startedAt: Date(),
                              passwordSource: configuration.passwordSource.name)
        let server: SocketServer
        let (network, watch) = startNetworkWatch()
        do {
            let router = CommandRouter(registrar: registrar, outbox: outbox, recovery: recovery, hub: hub, info: info, control: control)
            // The end of a burst of requests or sends is when the memory it freed can go back.
            var limits = configuration.serverLimits
            // Each backend connection and each removal log kept open is a descriptor too.
            limits.descriptorsForTheDaemon += configuration.outbox.concurrency + OutboxStore.logsKeptOpen
            server = try SocketServer(listener: socket.fd, handler: router, limits: limits, logger: logger,
                                      network: network, whenQuiet: MallocArenas.releaseFreePages)
        } catch {
            network?.close()
            watch?.stop()
            socket.closeAndRemove()
            lock.release()
            throw .startup("\(error)")
        }
        running.lock = lock
        running.socket = socket
        running.server = server
        running.networkWatch = watch
        hub.attach(server)
        await registrar.start()
        await outbox.start()
        server.start()
        logger.notice("notifyd \(NotifydVersion.current) listening on \(socket.path)\(socket.activated ? " (socket activation)" : "")")
        configuration.serviceManager.notify("READY=1\nSTATUS=listening on \(socket.path)\nMAINPID=\(getpid())")
    }

    /// What a write killed half-way left behind: possibly a copy of the password. With the
    /// state directory locked, no other writer can be in the middle of one.
    private func removeStaleTemporaries() {
        let stateDirectory = configuration.stateDirectory
        for directory in [stateDirectory, OutboxStore(stateDirectory: stateDirectory).directory] {
            let removed = AtomicFile.removeStaleTemporaries(in: directory)
            if !removed.isEmpty {
                logger.notice("removed \(removed.count) temporary file(s) an interrupted write left in \(directory)")
            }
        }
    }

    public func stop() async {
        guard let server = running.server else { return }
        running.server = nil
        // Watchers learn that this is a normal stop before their connection closes.
        hub.publish(ShutdownEvent(time: Date()))
        configuration.serviceManager.notify("STOPPING=1")
        await server.stopAccepting()
        running.networkWatch?.stop()
        await outbox.shutdown()
        await registrar.shutdown()
        await server.closeConnections()
        hub.attach(nil)
        running.socket?.closeAndRemove()
        running.lock?.release()
        logger.notice("notifyd stopped")
    }

    /// Reads the configuration again (`notifyctl reload`, SIGHUP). A configuration with
    /// problems changes nothing; of the changed settings, those a running notifyd can take
    /// up are applied and the others named, to wait for a restart.
    public func reload() async -> ReloadResult {
        guard let source = configuration.settingsSource, let current = settingsInEffect.withLock({ $0 }) else {
            return ReloadResult(config: "", applied: [], restartNeeded: [], problems: ["this notifyd was not started from a configuration"])
        }
        let (settings, problems) = source.read()
        guard problems.isEmpty else {
            logger.warning("reload: configuration unchanged: " + problems.map(\.description).joined(separator: "; "))
            return ReloadResult(config: settings.configPath, applied: [], restartNeeded: [], problems: problems.map(\.description))
        }
        let (reloadable, restartNeeded) = current.changes(to: settings)
        var applied = current
        for key in reloadable {
            applied.values[key] = settings.values[key]
            applied.origins[key] = settings.origins[key]
        }
        if reloadable.contains("log_level") {
            applied.logLevel = settings.logLevel
            logger.setLevel(settings.logLevel)
        }
        if reloadable.contains("send_platforms") {
            applied.sendPlatforms = settings.sendPlatforms
            control.sendPlatforms = settings.sendPlatforms
        }
        settingsInEffect.withLock { $0 = applied }
        logger.notice("reloaded \(settings.configPath): " + (reloadable.isEmpty ? "nothing to apply" : "applied " + reloadable.joined(separator: ", "))
                      + (restartNeeded.isEmpty ? "" : "; takes effect after a restart: " + restartNeeded.joined(separator: ", ")))
        return ReloadResult(config: settings.configPath, applied: reloadable, restartNeeded: restartNeeded, problems: [],
                            restartCommand: configuration.restartCommand)
    }
}

/// Lets the control closures, made before `self` is complete, reach the daemon later.
private final class ReloadTarget: @unchecked Sendable {
    // Safe: written once, in `Daemon.init`, before any command can run.
    weak var daemon: Daemon?
}
