#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem

/// The parts behind notifyd's socket and how they are joined, built in one place for the
/// daemon and for the tests, so that a test of the parts tests the daemon's own wiring:
///
/// - one settings store, which each part subscribes to as it is made;
/// - one account keeper, the only owner of the login, asked by the registrar and the outbox;
/// - one HTTP client for both, so that registrations and sends share its connections;
/// - one `BackendRecovery`: a backend that answers either of them ends what waits on it in
///   both, and so does a network that comes back, or a backend the probe sees back;
/// - `lifecycle` starts and stops them all, in the orders declared where they are joined;
/// - the registrar tells the outbox when the login changed, and which platform names the
///   backend refused registrations under (`UnknownPlatforms`), and hands a registration
///   left at a backend no longer used to `retired`, which deletes it there.
public struct Components: Sendable {
    public let settings: SettingsStore
    public let accounts: AccountKeeper
    public let backend: any BackendAPI
    public let recovery: BackendRecovery
    public let outbox: Outbox
    public let registrar: Registrar
    public let retired: RetiredRegistrations
    /// Starts and stops the parts above, each once, in the orders declared in `init`: the
    /// start loads what the last run left and takes up the work; the shutdown stops
    /// starting work, waits briefly for what is under way, and saves what is kept.
    public let lifecycle: ServiceGroup

    /// `backend` stands in for the HTTP client (a test's scripted one); the callbacks are
    /// what the daemon publishes to its watchers.
    public init(settings: SettingsStore, stateDirectory: String, backend: (any BackendAPI)? = nil, clock: any WakeClock = SystemWakeClock(),
                logger: Logger, fileSystem: FileSystemCalls = .system,
                onRegistration: @escaping @Sendable (RegistrationStatus) -> Void = { _ in },
                onDelivery: @escaping @Sendable (DeliveryStatus) -> Void = { _ in },
                onOutboxEmptied: @escaping @Sendable () -> Void = {},
                onNetworkEvent: @escaping @Sendable (NetworkEvent) -> Void = { _ in }) {
        self.settings = settings
        let backend = backend ?? HTTPBackend(settings: settings)
        self.backend = backend
        let accounts = AccountKeeper(stateDirectory: stateDirectory, settings: settings, fileSystem: fileSystem)
        self.accounts = accounts
        let recovery = BackendRecovery(onEvent: onNetworkEvent)
        self.recovery = recovery
        let unknownPlatforms = UnknownPlatforms()
        let outbox = Outbox(settings: settings, stateDirectory: stateDirectory, backend: backend, clock: clock, logger: logger,
                            accounts: accounts, recovery: recovery, unknownPlatforms: unknownPlatforms, onEvent: onDelivery, onEmptied: onOutboxEmptied, fileSystem: fileSystem)
        self.outbox = outbox
        let retired = RetiredRegistrations(stateDirectory: stateDirectory, backend: backend, accounts: accounts, settings: settings, clock: clock,
                                           logger: logger, recovery: recovery, fileSystem: fileSystem)
        self.retired = retired
        accounts.keyringItemsHeld.withLock { $0 = { [weak retired] in await retired?.keyringItems ?? [] } }
        let registrar = Registrar(settings: settings, stateDirectory: stateDirectory, backend: backend, accounts: accounts, clock: clock,
                                  logger: logger, recovery: recovery, retired: retired, unknownPlatforms: unknownPlatforms, onStatus: onRegistration,
                                  onAccountChange: { await outbox.accountChanged() }, fileSystem: fileSystem)
        self.registrar = registrar
        if backend.probes {
            recovery.watchReachability(clock: clock) { await backend.probe($0, tls: $1) }
        }
        recovery.attach(.outbox, wake: { await outbox.backendWorks($0) }, networkChanged: { await outbox.networkChanged($0) })
        recovery.attach(.registrar, wake: { await registrar.backendWorks($0) }, networkChanged: { await registrar.networkChanged($0) })
        recovery.attach(.retirement, wake: { await retired.backendWorks($0) }, networkChanged: { _ in await retired.networkChanged() })
        // Started: the recovery and the account keeper have nothing to take up and are there
        // before anything asks them; then the work, the most needed first: the registration
        // (without it nothing reaches this device), the queue, and the deletions left at
        // old backends, which only tidy up.
        // Stopped: the wakes first, so that none starts work in a part already stopped;
        // then the password sources, so that what waits on one ends now instead of at its
        // deadline; then the queue, the registration and the deletions, each cutting its
        // work under way short at the one `ShutdownDeadline`.
        lifecycle = ServiceGroup(startOrder: [recovery, accounts, registrar, outbox, retired],
                                 stopOrder: [recovery, accounts, outbox, registrar, retired])
    }
}
