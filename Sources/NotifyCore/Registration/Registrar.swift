#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem

/// Drives `RegistrationMachine`: owns the device state, makes the backend calls the machine
/// asks for (with the credentials `AccountKeeper` holds), keeps its one wake-up timer, saves
/// state, publishes status changes and answers each caller waiting for the outcome of its
/// own change.
///
/// A login made while a device token is set is a trial: the next registration pass uses
/// the new credentials, and they are saved only once the backend did not refuse them.
public actor Registrar: Service {
    /// What `status` shows, without the password.
    public struct Snapshot: Sendable {
        public var device: DeviceState
        public var user: String?
        public var backend: String?
        public var registration: RegistrationStatus
        /// Why the password command, the systemd credential or the keyring failed last,
        /// until it works again.
        public var passwordProblem: String?
        /// The login's password is in the keyring.
        public var passwordInKeyring: Bool
        /// The saved login, when it is for another origin than the backend in force.
        public var strandedLogin: Credentials?
    }

    /// A login being answered: its revision, and the generation its check started at.
    public struct PendingLogin: Sendable {
        public var user: String
        public var revision: String
        public var generation: Int
    }

    /// Read where each setting is used; `settingsChanged` takes up a reload.
    let settings: SettingsStore
    let stateStore: StateStore
    /// `state.json` is written there, and awaited, so that an fsync never holds a thread
    /// of the Swift concurrency pool.
    let writer = FileWriter(name: "notifyd-state")
    /// One change at a time, each with its save (see `Turns`): every change to the device,
    /// the login or the machine takes a turn, and reads do not.
    let turns = Turns()
    let accounts: AccountKeeper
    let backend: any BackendAPI
    let clock: any WakeClock
    let logger: Logger
    let onStatus: @Sendable (RegistrationStatus) -> Void
    let onAccountChange: @Sendable () async -> Void
    /// Told of each backend call that succeeded, and of whether a retry waits on a failed backend.
    let recovery: BackendRecovery?
    /// Deletes the registrations left at a backend no longer used.
    let retired: RetiredRegistrations?
    /// Told of the platform names the backend refused registrations under, for the outbox.
    let unknownPlatforms: UnknownPlatforms

    // `status` shows a part made from `device`, `machine` and `checkTask`, published anew
    // when any of them is set (Registrar+Status.swift).
    nonisolated let statusShown: StatusPart<StatusShown>
    var device: DeviceState {
        didSet { publishStatus() }
    }
    /// The login in force, as `accounts` holds it.
    /// The login in force here: none while the one saved was made for another origin.
    var credentials: Credentials? { accounts.activeLogin }
    /// A login waiting for the backend's check; registration passes use it meanwhile.
    var trial: Credentials?
    var trialCommitting = false
    /// The check request of the login on trial, when no registration pass checks it.
    var checkTask: Task<Void, Never>? {
        didSet { publishStatus() }
    }
    var loginVerdicts: [String: LoginVerdict] = [:]
    /// Where each saved login's password went, until its `login` reply takes it.
    var passwordsKept: [String: PasswordKept] = [:]
    /// The registration generation a saved login started, for its caller to wait on.
    var loginGenerations: [String: Int] = [:]
    var machine: RegistrationMachine {
        didSet { publishStatus() }
    }
    /// Wakes the machine at the time it asks for (`RegistrationAction.wake`).
    var wake = WakeTimer<Date>()
    var stepTask: Task<Void, Never>?
    /// The login the backend call in flight uses.
    var stepRevision: String?
    var waiters: [UInt64: Waiter] = [:]
    /// Ends the waits of `waiters` at their deadlines.
    var waiterTimer = DeadlineTimer()
    var nextWaiterID: UInt64 = 0
    var lastPublished: RegistrationStatus?

    /// What a caller waits for: its own outcome, not a counter other commands move too.
    enum Awaited {
        /// The change that raised the machine's generation to this is settled.
        case generation(Int)
        /// The deletion asked for at this generation has ended.
        case deletion(Int)
        /// The login with this revision was accepted, refused or saved unchecked.
        case login(revision: String)
    }

    struct Waiter {
        var awaited: Awaited
        /// Resumed with the status as it was when the outcome became known (a retry due
        /// soon may have begun by the time the waiter runs), nil when the wait ran out.
        var continuation: CheckedContinuation<RegistrationStatus?, Never>
        var deadline: ContinuousClock.Instant
    }

    public init(
        settings: SettingsStore, stateDirectory: String, backend: any BackendAPI, accounts: AccountKeeper,
        clock: any WakeClock = SystemWakeClock(), logger: Logger, recovery: BackendRecovery? = nil, retired: RetiredRegistrations? = nil,
        unknownPlatforms: UnknownPlatforms = UnknownPlatforms(), onStatus: @escaping @Sendable (RegistrationStatus) -> Void = { _ in },
        onAccountChange: @escaping @Sendable () async -> Void = {}, fileSystem: FileSystemCalls = .system
    ) {
        self.settings = settings
        self.accounts = accounts
        self.stateStore = StateStore(directory: stateDirectory, calls: fileSystem)
        self.backend = backend
        self.clock = clock
        self.logger = logger
        self.onStatus = onStatus
        self.onAccountChange = onAccountChange
        self.recovery = recovery
        self.retired = retired
        self.unknownPlatforms = unknownPlatforms
        let (state, stateWarning) = stateStore.load()
        let credentials = accounts.activeLogin
        if let stateWarning { logger.warning(stateWarning) }
        if let credentialsWarning = accounts.loadWarning { logger.warning(credentialsWarning) }
        self.device = state
        let machine = RegistrationMachine(
            inputs: Self.inputs(device: state, account: credentials, settings: settings.current),
            record: state.registration, policy: settings[\.policy], seed: UInt64.random(in: 0...UInt64.max))
        self.machine = machine
        self.statusShown = StatusPart(StatusShown(device: state, machine: machine, checkTask: nil))
        unknownPlatforms.update(state.registration.refusedPlatforms)
        settings.subscribe { [weak self] in await self?.settingsChanged() }
    }

    // MARK: Commands

    /// Looks once after start: refreshes when the last success is older than the interval.
    public func start() async {
        await turns.begin()
        defer { turns.end() }
        await apply(machine.start(now: clock.now()))
    }

    /// Returns the generation to wait on. A change that cannot be saved is not made.
    /// The generation to wait for, and the platform used with why (said to the user every
    /// time: a token set for the wrong platform registers without complaint).
    public func setToken(_ raw: String, platform given: Platform?) async throws(CoreError) -> (generation: Int, platform: TokenPlatform) {
        await turns.begin()
        defer { turns.end() }
        let chosen: TokenPlatform
        if let given {
            chosen = TokenPlatform(platform: given, chosen: "given")
        } else {
            let current = device.token == nil ? settings[\.platform] : device.platform
            let platform = DeviceToken.platform(of: raw, current: current)
            chosen = TokenPlatform(platform: platform, chosen: platform != current ? "token_form" : device.token == nil ? "default" : "kept")
        }
        var changed = device
        changed.token = try DeviceToken.normalize(raw, for: chosen.platform)
        changed.platform = chosen.platform
        changed.enabled = true
        return (try await change(to: changed), chosen)
    }

    public func setTags(_ tags: [String]) async throws(CoreError) -> Int {
        await turns.begin()
        defer { turns.end() }
        var changed = device
        changed.tags = try RegistrationTags.validate(tags)
        changed.enabled = true
        return try await change(to: changed)
    }

    public func forceRegister() async throws(CoreError) -> Int {
        await turns.begin()
        defer { turns.end() }
        var enabled = device
        enabled.enabled = true
        try await save(enabled)
        device = enabled
        await apply(machine.forceRegister(now: clock.now()))
        return machine.generation
    }

    /// Deletes the registration at the backend (404/410/500 count as already gone) and
    /// stops registering until `register` or a change. A deletion that fails for a reason
    /// that may pass goes on with the backoff (`deletionPending` in the result), unless
    /// `untilDone` is false (`logout`): then its failure is thrown.
    public func unregister(untilDone: Bool = true) async throws(CoreError) -> UnregisterResult {
        let generation = await requestDeletion(untilDone: untilDone)
        // Waits for this deletion itself: a pass in flight that fails first is not its answer.
        _ = await wait(for: .deletion(generation), timeout: 300)
        let outcome = RegistrationOutcome(registration: machine.status, settled: machine.settledGeneration >= generation)
        guard let deletion = machine.lastDeletion, deletion.generation >= generation else {
            throw .backendUnavailable("the backend did not answer in time; the registration may still exist")
        }
        switch deletion.outcome {
        case .deleted(let id):
            if let id { logger.notice("deleted registration \(id)") }
            return UnregisterResult(deletedId: id, registration: outcome.registration)
        case .retrying(let id, let failure):
            guard untilDone else { throw error(for: failure) }
            logger.warning("could not delete registration \(id) yet (\(error(for: failure).description)); retrying")
            return UnregisterResult(deletedId: nil, registration: outcome.registration, deletionPending: id)
        case .failed(let failure):
            throw error(for: failure)
        }
    }

    /// Turns registering off and asks for the deletion; the generation to wait on.
    private func requestDeletion(untilDone: Bool) async -> Int {
        await turns.begin()
        defer { turns.end() }
        device.enabled = false
        await apply(machine.requestDeletion(now: clock.now(), untilDone: untilDone))
        return machine.generation
    }

    /// Unregisters, then forgets the credentials. With `force`, forgets them even if the
    /// registration could not be deleted (it then expires at the hub on its own); without,
    /// a logout that fails changes nothing: registration goes on as before.
    public func logout(force: Bool, forgetOldBackends: Bool = false) async throws(CoreError) -> LogoutResult {
        let forgotten = forgetOldBackends ? await retired?.forgetAll() ?? [] : nil
        // A login stranded at another origin is logged out too: its registration there was
        // handed to `retired` when the backend moved.
        guard let loggedIn = accounts.loggedIn else {
            if let path = try await accounts.removeUnreadableFile() {
                let removed = "removed \(path), which notifyd could not read at start: the password it may have held is forgotten"
                logger.notice(removed)
                return LogoutResult(user: nil, deletedId: nil, warning: removed, oldBackendsForgotten: forgotten)
            }
            guard let forgotten else { throw .notLoggedIn }
            return LogoutResult(user: nil, deletedId: nil, oldBackendsForgotten: forgotten)
        }
        let user = loggedIn.user
        let wasEnabled = device.enabled
        var deletedId: String?
        var warning: String?
        do {
            deletedId = try await unregister(untilDone: false).deletedId
        } catch {
            guard force else {
                await turns.begin()
                defer { turns.end() }
                await setRegistration(enabled: wasEnabled)
                throw .stillLoggedIn(because: error)
            }
            warning = "the registration could not be deleted (\(error.description)); forgot the credentials anyway"
            logger.warning(warning!)
        }
        // Only the login this logout started with: one made meanwhile is kept.
        guard case .removed(let keyringWarning) = try await accounts.remove(revision: loggedIn.revision) else {
            let kept = "a login made meanwhile replaced \(user)'s credentials; it was kept"
            logger.notice(kept)
            return LogoutResult(user: user, deletedId: deletedId, warning: [warning, kept].compactMap { $0 }.joined(separator: "; "))
        }
        if let keyringWarning { warning = [warning, keyringWarning].compactMap { $0 }.joined(separator: "; ") }
        // The credentials are gone whatever happens to state.json: the machine must know.
        await turns.begin()
        defer { turns.end() }
        await setRegistration(enabled: true)
        await onAccountChange()
        logger.notice("logged out \(user)")
        let kept = await retired?.passwordsKept ?? []
        return LogoutResult(user: user, deletedId: deletedId, warning: warning, passwordsKept: kept.isEmpty ? nil : kept,
                            oldBackendsForgotten: forgotten)
    }

    /// Waits until the outcome of `generation` is known, or `timeout` seconds pass.
    public func waitForOutcome(generation: Int, timeout: Double?) async -> RegistrationOutcome {
        await changesSaved()
        if machine.settledGeneration < generation, let timeout, timeout > 0,
           let atOutcome = await wait(for: .generation(generation), timeout: timeout) {
            return RegistrationOutcome(registration: atOutcome, settled: true)
        }
        return RegistrationOutcome(registration: machine.status, settled: machine.settledGeneration >= generation)
    }

    public var registrationStatus: RegistrationStatus { machine.status }

    /// The backend at `backend` answered another request: a retry waiting on it goes now.
    public func backendWorks(_ backend: String) async {
        await turns.begin()
        defer { turns.end() }
        guard inputs.backend == backend else { return }
        await apply(machine.backendWorks(now: clock.now()))
    }

    /// A reload replaced the settings: the retry or refresh armed now is armed again for the
    /// new `retry_min`, `retry_max` and `refresh_interval`, and a new `backend` (that of a
    /// login naming none) is registered with, as after a login.
    private func settingsChanged() async {
        await turns.begin()
        defer { turns.end() }
        await apply(machine.changePolicy(settings[\.policy], now: clock.now()))
        await apply(machine.update(inputs, now: clock.now()))
    }

    /// The network changed or the machine woke: a retry waiting on the network goes now,
    /// and so does a refresh that fell due while the machine slept. After the wall clock
    /// was set, the timer is armed again: the one armed was measured on the old clock.
    public func networkChanged(_ change: NetworkChange) async {
        await turns.begin()
        defer { turns.end() }
        if change == .clockSet { wake.cancel() }
        await apply(machine.networkMayBeBack(now: clock.now()))
    }

    /// What a failed request to `backend` means, a lack of route judged by `recovery`.
    nonisolated func classify(_ error: BackendCallError, route: BackendFailure.Route, backend: String, api: BackendDialect) -> BackendFailure {
        recovery?.classify(error, route: route, backend: backend, api: api) ?? BackendFailure.classify(error, route: route, api: api)
    }

    public var passwordSource: PasswordSource { accounts.passwordSource }

    /// Stops timers, lets an in-flight call finish for a moment, saves, releases waiters.
    public func shutdown() async {
        wake.cancel()
        if let stepTask {
            // The request under way is cancelled at the deadline.
            await ShutdownDeadline.bound { await stepTask.value } atDeadline: { stepTask.cancel() }
        }
        await turns.begin()
        defer { turns.end() }
        await persist()
        waiterTimer.cancel()
        for (id, waiter) in waiters {
            waiters[id] = nil
            waiter.continuation.resume(returning: nil)
        }
    }
}
