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
    /// The parts behind the socket, joined as `Components` joins them.
    public let components: Components
    public var registrar: Registrar { components.registrar }
    public var outbox: Outbox { components.outbox }
    /// The one owner of the settings in effect, read where each is used.
    public var settings: SettingsStore { components.settings }
    /// What waits on the backend and the network, and what is known of the network.
    public var recovery: BackendRecovery { components.recovery }
    /// The HTTP client both use, told when the network changed.
    var backend: any BackendAPI { components.backend }
    let logger: Logger
    private let hub: EventHub
    private let running = Mutex<Running?>(nil)
    /// The socket server between `start` and `stop`, which a reload resizes too.
    let server = Mutex<SocketServer?>(nil)
    let control: DaemonControl
    /// Reloads one after another, never interleaved.
    let reloads = Turns()
    /// When the configuration in effect was read, and whether at the start (just before
    /// this daemon was made) or at a reload: what a reload that changed nothing reports.
    let settingsRead = Mutex<(at: Date, atStart: Bool)>((Date(), true))

    /// What exists only between `start` and `stop`.
    private struct Running {
        let socket: ListeningSocket
        let lock: StateDirectoryLock
        let services: ServiceGroup
    }

    public init(configuration: DaemonConfiguration, backend: (any BackendAPI)? = nil, clock: any WakeClock = SystemWakeClock(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let hub = EventHub()
        self.hub = hub
        let settings = SettingsStore(configuration.settings, text: configuration.settingsSource?.current.values ?? [:])
        // First, so that what the others log as they take new settings has the new level.
        settings.subscribe { logger.setLevel(settings[\.logLevel]) }
        let reloadBox = ReloadTarget()
        self.control = DaemonControl(requestStop: configuration.requestStop,
                                     reload: { await reloadBox.daemon?.reload() ?? ReloadResult(config: "", applied: [], restartNeeded: [], problems: ["notifyd is stopping"]) })
        let components = Components(
            settings: settings, stateDirectory: configuration.stateDirectory, backend: backend, clock: clock, logger: logger,
            onRegistration: { status in hub.publish(RegistrationEvent(time: Date(), registration: status)) },
            onDelivery: { delivery in hub.publish(SendEvent(time: Date(), delivery: delivery)) },
            onOutboxEmptied: { hub.workEnded() },
            onNetworkEvent: { hub.publish($0) })
        self.components = components
        reloadBox.daemon = self
        // The clients' share of the open-file limit, which leaves room for the backend's connections.
        settings.subscribe { [weak self] in
            guard let self else { return }
            server.withLock { $0 }?.keepForTheDaemon(descriptorsKept(connections: settings[\.maxConnections]))
        }
    }

    public func start() async throws(DaemonError) {
        do {
            try AtomicFile.ensureDirectory(configuration.stateDirectory)
        } catch {
            throw .startup(error.description)
        }
        // Again once the directory exists, unless `main` found it there and checked it.
        if !configuration.stateDirectoryChecked { try StateDirectoryCheck.run(configuration.stateDirectory) }
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
        let info = DaemonInfo(pid: getpid(), socketPath: socket.path, stateDirectory: configuration.stateDirectory, startedAt: Date())
        let server: SocketServer
        let (network, watch) = startNetworkWatch()
        do {
            let router = CommandRouter(registrar: registrar, outbox: outbox, recovery: recovery, retired: components.retired, hub: hub, info: info,
                                       control: control, settings: settings, verifyingStatusWith: configuration.checksStatusParts ? logger : nil)
            var limits = configuration.serverLimits
            limits.descriptorsForTheDaemon = descriptorsKept(connections: settings[\.maxConnections])
            // The end of a burst of requests or sends is when the memory it freed can go back.
            server = try SocketServer(listener: socket.fd, handler: router, limits: limits, logger: logger,
                                      network: network, whenQuiet: MallocArenas.releaseFreePages)
        } catch {
            // The network monitor was the server's to close.
            watch?.stop()
            socket.closeAndRemove()
            lock.release()
            throw .startup("\(error)")
        }
        let accepting = AcceptingClients(server), connections = OpenConnections(server), requests = RequestsUnderWay(server)
        let watching = WatchedNetwork(watch)
        // Started: what is behind the socket, then the socket, so that the first command
        // finds the registration and the queue loaded. Stopped: the socket first, so that
        // no command comes in meanwhile; the network monitor, so that it wakes no part
        // that stops; the parts behind the socket; then the connections, once the replies
        // they are owed have been made, and the requests they left.
        let services = ServiceGroup(startOrder: [requests, connections, watching, components.lifecycle, accepting],
                                    stopOrder: [accepting, watching, components.lifecycle, connections, requests])
        // Kept before `stop` can see a server: a stop finds all it must end.
        running.withLock { $0 = Running(socket: socket, lock: lock, services: services) }
        self.server.withLock { $0 = server }
        hub.attach(server)
        await services.start()
        logger.notice("notifyd \(NotifydVersion.described()) listening on \(socket.path)\(socket.activated ? " (socket activation)" : "")")
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

    /// What the daemon keeps of the open-file limit: each backend connection and each
    /// removal log kept open is a descriptor too.
    func descriptorsKept(connections: Int) -> Int {
        configuration.serverLimits.descriptorsForTheDaemon + connections + OutboxStore.logsKeptOpen
    }

    public func stop() async {
        guard server.withLock({ $0.take() }) != nil else { return }
        // Watchers learn that this is a normal stop before their connection closes.
        hub.publish(ShutdownEvent(time: Date()))
        configuration.serviceManager.notify("STOPPING=1")
        guard let running = running.withLock({ $0.take() }) else { return }
        await running.services.shutdown()
        hub.attach(nil)
        running.socket.closeAndRemove()
        running.lock.release()
        logger.notice("notifyd stopped")
    }
}

/// Lets the control closures, made before `self` is complete, reach the daemon later.
private final class ReloadTarget: Sendable {
    private struct Reference {
        weak var daemon: Daemon?
    }
    private let reference = Mutex(Reference())

    var daemon: Daemon? {
        get { reference.withLock { $0.daemon } }
        set { reference.withLock { $0.daemon = newValue } }
    }
}
