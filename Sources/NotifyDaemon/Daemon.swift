import Foundation
import NotifyCore
import NotifyProtocol
import NotifySocket

/// notifyd: the registration agent behind the control socket. `start` binds and serves;
/// `stop` stops accepting, lets in-flight work finish briefly, saves state and removes
/// the socket. Used by `main` and, in-process, by the tests.
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    public let registrar: Registrar
    private let logger: Logger
    private let hub: EventHub
    private let running: Running

    /// What exists only between `start` and `stop`.
    private final class Running: @unchecked Sendable {
        // Safe: written once in `start` and read in `stop`, which callers never run concurrently
        // (main and the tests call them in sequence).
        var server: SocketServer?
        var socket: ListeningSocket?
        var lock: StateDirectoryLock?
    }

    public init(configuration: DaemonConfiguration, backend: (any BackendAPI)? = nil, clock: any WakeClock = SystemWakeClock(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let hub = EventHub()
        self.hub = hub
        self.running = Running()
        self.registrar = Registrar(
            settings: .init(configuredBackend: configuration.backend, policy: configuration.policy),
            stateDirectory: configuration.stateDirectory,
            backend: backend ?? HTTPBackend(requestTimeout: configuration.requestTimeout),
            clock: clock, logger: logger,
            onStatus: { status in hub.publish(RegistrationEvent(time: Date(), registration: status)) })
    }

    public func start() async throws(DaemonError) {
        do {
            try AtomicFile.ensureDirectory(configuration.stateDirectory)
        } catch {
            throw .startup(error.description)
        }
        let lock = try StateDirectoryLock(directory: configuration.stateDirectory)
        let socket: ListeningSocket
        do {
            socket = try ListeningSocket.bind(configuration.socket, logger: logger)
        } catch {
            lock.release()
            throw error
        }
        if let warning = configuration.socket.warning { logger.warning(warning) }
        let info = DaemonInfo(pid: getpid(), socketPath: socket.path, stateDirectory: configuration.stateDirectory, startedAt: Date())
        let server: SocketServer
        do {
            server = try SocketServer(listener: socket.fd, router: CommandRouter(registrar: registrar, hub: hub, info: info), logger: logger)
        } catch {
            socket.closeAndRemove()
            lock.release()
            throw .startup("\(error)")
        }
        running.lock = lock
        running.socket = socket
        running.server = server
        await registrar.start()
        server.start()
        logger.notice("notifyd \(NotifydVersion.current) listening on \(socket.path)")
    }

    public func stop() async {
        guard let server = running.server else { return }
        running.server = nil
        server.stopAccepting()
        await registrar.shutdown()
        await server.closeConnections(grace: 2)
        running.socket?.closeAndRemove()
        running.lock?.release()
        logger.notice("notifyd stopped")
    }
}
