import Foundation
import NotifyProtocol

/// Drives `RegistrationMachine`: owns the device state and credentials, makes the backend
/// calls the machine asks for, keeps its one wake-up timer, saves state, publishes status
/// changes and answers callers waiting for the outcome of their change.
public actor Registrar {
    public struct Settings: Sendable {
        /// The backend used when the login did not name one.
        public var configuredBackend: String?
        public var policy: RegistrationPolicy
        /// The platform of a first token set without `--platform`.
        public var defaultPlatform: Platform
        /// The name this backend knows Android by (`fcm` or `gcm`), for either name given.
        public var androidName: Platform

        public init(configuredBackend: String?, policy: RegistrationPolicy = RegistrationPolicy(), defaultPlatform: Platform = .apns, androidName: Platform = .fcm) {
            self.configuredBackend = configuredBackend
            self.policy = policy
            self.defaultPlatform = defaultPlatform
            self.androidName = androidName
        }
    }

    /// What `status` shows, without the password.
    public struct Snapshot: Sendable {
        public var device: DeviceState
        public var user: String?
        public var backend: String?
        public var registration: RegistrationStatus
    }

    private let settings: Settings
    private let stateStore: StateStore
    private let credentialStore: CredentialStore
    private let backend: any BackendAPI
    private let passwords: PasswordProvider
    private let clock: any WakeClock
    let logger: Logger
    private let onStatus: @Sendable (RegistrationStatus) -> Void

    private var device: DeviceState
    private var credentials: Credentials?
    private var machine: RegistrationMachine
    private var wakeTask: Task<Void, Never>?
    private var stepTask: Task<Void, Never>?
    private var waiters: [UInt64: Waiter] = [:]
    private var nextWaiterID: UInt64 = 0
    private var lastPublished: RegistrationStatus?

    private struct Waiter {
        var generation: Int
        var continuation: CheckedContinuation<RegistrationOutcome, Never>
    }

    public init(
        settings: Settings, stateDirectory: String, backend: any BackendAPI, passwords: PasswordProvider = PasswordProvider(source: .stored),
        clock: any WakeClock = SystemWakeClock(), logger: Logger, onStatus: @escaping @Sendable (RegistrationStatus) -> Void = { _ in }
    ) {
        self.settings = settings
        self.passwords = passwords
        self.stateStore = StateStore(directory: stateDirectory)
        self.credentialStore = CredentialStore(directory: stateDirectory)
        self.backend = backend
        self.clock = clock
        self.logger = logger
        self.onStatus = onStatus
        let (state, stateWarning) = stateStore.load()
        let (credentials, credentialsWarning) = credentialStore.load()
        if let stateWarning { logger.warning(stateWarning) }
        if let credentialsWarning { logger.warning(credentialsWarning) }
        self.device = state
        self.credentials = credentials
        self.machine = RegistrationMachine(
            inputs: Self.inputs(device: state, credentials: credentials, settings: settings),
            record: state.registration, policy: settings.policy, seed: UInt64.random(in: 0...UInt64.max))
    }

    // MARK: Commands

    /// Looks once after start: refreshes when the last success is older than the interval.
    public func start() {
        apply(machine.start(now: clock.now()))
    }

    /// Returns the generation to wait on.
    public func setToken(_ raw: String, platform: Platform?) throws(CoreError) -> Int {
        let platform = platform ?? (device.token == nil ? settings.defaultPlatform : device.platform)
        let token = try DeviceToken.normalize(raw, for: platform)
        device.token = token
        device.platform = platform
        device.enabled = true
        return try changed()
    }

    public func setTags(_ tags: [String]) throws(CoreError) -> Int {
        device.tags = try RegistrationTags.validate(tags)
        device.enabled = true
        return try changed()
    }

    /// `password` may be nil when it comes from a command or a systemd credential.
    public func login(user: String, password: String?, backend: String?) throws(CoreError) -> Int {
        try Credentials.validateUser(user)
        let password = password ?? ""
        if password.isEmpty && !passwords.isExternal {
            throw .invalidArgument("no password given (and no password_command or systemd credential is configured)")
        }
        let chosen = try backend.map { (url: String) throws(CoreError) in try BackendURL.validate(url) }
        guard chosen ?? settings.configuredBackend != nil else { throw .noBackend }
        // An external password is never stored: it is fetched when needed.
        let credentials = Credentials(user: user, password: passwords.isExternal ? "" : password, backend: chosen)
        passwords.forget()
        try credentialStore.save(credentials)
        self.credentials = credentials
        device.enabled = true
        logger.notice("logged in as \(user) at \(chosen ?? settings.configuredBackend ?? "?")")
        return try changed()
    }

    public func forceRegister() throws(CoreError) -> Int {
        device.enabled = true
        try stateStore.save(stateToSave)
        apply(machine.forceRegister(now: clock.now()))
        return machine.generation
    }

    /// Deletes the registration at the backend (404/410/500 count as already gone) and
    /// stops registering until `register` or a change.
    public func unregister() async throws(CoreError) -> UnregisterResult {
        device.enabled = false
        apply(machine.requestDeletion(now: clock.now()))
        let generation = machine.generation
        let outcome = await waitForOutcome(generation: generation, timeout: 300)
        guard let deletion = machine.lastDeletion, deletion.generation >= generation else {
            throw .backendUnavailable("no answer from the backend in time; the registration may still exist")
        }
        switch deletion.outcome {
        case .deleted(let id):
            if let id { logger.notice("deleted registration \(id)") }
            return UnregisterResult(deletedId: id, registration: outcome.registration)
        case .failed(let failure):
            throw error(for: failure)
        }
    }

    /// Unregisters, then forgets the credentials. With `force`, forgets them even if the
    /// registration could not be deleted (it then expires at the hub on its own).
    public func logout(force: Bool) async throws(CoreError) -> LogoutResult {
        guard let user = credentials?.user else { throw .notLoggedIn }
        var deletedId: String?
        var warning: String?
        do {
            deletedId = try await unregister().deletedId
        } catch {
            guard force else { throw .stillLoggedIn(because: error) }
            warning = "the registration could not be deleted (\(error.description)); forgot the credentials anyway"
            logger.warning(warning!)
        }
        try credentialStore.remove()
        credentials = nil
        device.enabled = true
        _ = try changed()
        logger.notice("logged out \(user)")
        return LogoutResult(user: user, deletedId: deletedId, warning: warning)
    }

    /// Waits until the outcome of `generation` is known, or `timeout` seconds pass.
    public func waitForOutcome(generation: Int, timeout: Double?) async -> RegistrationOutcome {
        if machine.settledGeneration >= generation || timeout == nil || timeout == 0 {
            return RegistrationOutcome(registration: machine.status, settled: machine.settledGeneration >= generation)
        }
        let id = nextWaiterID
        nextWaiterID += 1
        let seconds = timeout ?? 0
        return await withCheckedContinuation { continuation in
            waiters[id] = Waiter(generation: generation, continuation: continuation)
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                self.expireWaiter(id)
            }
        }
    }

    public func snapshot() -> Snapshot {
        Snapshot(device: device, user: credentials?.user, backend: effectiveBackend, registration: machine.status)
    }

    public var registrationStatus: RegistrationStatus { machine.status }

    /// The credentials for a backend call other than registration (sending).
    public func account() async throws(CoreError) -> BackendAccount {
        guard let credentials else { throw .notLoggedIn }
        guard let backend = effectiveBackend, let url = URL(string: backend) else { throw .noBackend }
        return BackendAccount(baseURL: url, user: credentials.user, password: try await passwords.password(stored: credentials.password))
    }

    /// The user sending, without fetching a password.
    public func sender() throws(CoreError) -> String {
        guard let credentials else { throw .notLoggedIn }
        guard effectiveBackend != nil else { throw .noBackend }
        return credentials.user
    }

    public var passwordSource: PasswordSource { passwords.source }

    /// The backend refused the password: an external one is fetched anew next time.
    public func passwordRefused() {
        passwords.forget()
    }

    /// Stops timers, lets an in-flight call finish for a moment, saves, releases waiters.
    public func shutdown() async {
        wakeTask?.cancel()
        wakeTask = nil
        if let stepTask {
            let deadline = Task {
                try? await Task.sleep(for: .seconds(2))
                stepTask.cancel()
            }
            await stepTask.value
            deadline.cancel()
        }
        persist()
        for (id, waiter) in waiters {
            waiters[id] = nil
            waiter.continuation.resume(returning: RegistrationOutcome(registration: machine.status, settled: false))
        }
    }

    // MARK: Driving the machine

    private var effectiveBackend: String? { credentials?.backend ?? settings.configuredBackend }

    private var stateToSave: DeviceState {
        var state = device
        state.registration = machine.record
        return state
    }

    private static func inputs(device: DeviceState, credentials: Credentials?, settings: Settings) -> RegistrationInputs {
        RegistrationInputs(
            token: device.token, platform: device.platform, tags: device.tags, account: credentials?.reference,
            backend: credentials?.backend ?? settings.configuredBackend, enabled: device.enabled)
    }

    /// Saves a change of the device state and lets the machine react to it.
    private func changed() throws(CoreError) -> Int {
        try stateStore.save(stateToSave)
        apply(machine.update(Self.inputs(device: device, credentials: credentials, settings: settings), now: clock.now()))
        return machine.generation
    }

    private func apply(_ actions: [RegistrationAction]) {
        for action in actions {
            switch action {
            case .perform(let step): perform(step)
            case .wake(let date): scheduleWake(at: date)
            case .cancelWake:
                wakeTask?.cancel()
                wakeTask = nil
            case .persist: persist()
            }
        }
        let status = machine.status
        if status != lastPublished {
            lastPublished = status
            onStatus(status)
        }
        for (id, waiter) in waiters where waiter.generation <= machine.settledGeneration {
            waiters[id] = nil
            waiter.continuation.resume(returning: RegistrationOutcome(registration: status, settled: true))
        }
    }

    private func expireWaiter(_ id: UInt64) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.continuation.resume(returning: RegistrationOutcome(registration: machine.status, settled: false))
    }

    private func scheduleWake(at date: Date) {
        wakeTask?.cancel()
        wakeTask = Task { [clock] in
            do { try await clock.sleep(until: date) } catch { return }
            self.wokeUp()
        }
    }

    private func wokeUp() {
        wakeTask = nil
        apply(machine.wake(now: clock.now()))
    }

    private func persist() {
        do {
            try stateStore.save(stateToSave)
        } catch {
            logger.error("\(error.description); the registration will be redone after a restart")
        }
    }

    private func perform(_ step: RegistrationStep) {
        guard let credentials else {
            // Logged out while the step was being decided; tell the machine nothing was sent.
            Task { self.finished(step, .failed(.transient(retryAfter: nil, reason: "not logged in"))) }
            return
        }
        let backendText: String
        switch step {
        case .createId(_, let backend), .delete(_, let backend): backendText = backend
        case .upsert(_, let target): backendText = target.backend
        }
        guard let url = URL(string: backendText) else {
            Task { self.finished(step, .failed(.rejected(status: 0, detail: "invalid backend URL \(backendText)"))) }
            return
        }
        logger.info(Self.describe(step, user: credentials.user))
        let backend = self.backend
        let settings = self.settings
        let passwords = self.passwords
        stepTask = Task {
            let account: BackendAccount
            do {
                account = BackendAccount(baseURL: url, user: credentials.user, password: try await passwords.password(stored: credentials.password))
            } catch {
                self.logger.error("\(error)")
                self.finished(step, .failed(.transient(retryAfter: nil, reason: "\(error)")))
                return
            }
            let result: StepResult
            switch step {
            case .createId(let handle, _):
                switch await backend.createRegistrationId(handle: handle, account: account) {
                case .success(let id): result = .created(id: id)
                case .failure(let error): result = .failed(BackendFailure.classify(error, route: .create))
                }
            case .upsert(let id, let target):
                let platform = target.platform.backendName(android: settings.androidName)
                let outcome = await backend.upsertRegistration(id: id, platform: platform, handle: target.handle, tags: target.tags, account: account)
                result = Self.stepResult(outcome, route: .upsert)
            case .delete(let id, _):
                result = Self.stepResult(await backend.deleteRegistration(id: id, account: account), route: .delete)
            }
            self.finished(step, result)
        }
    }

    private func finished(_ step: RegistrationStep, _ result: StepResult) {
        stepTask = nil
        if case .failed(.unauthorized) = result { passwords.forget() }
        log(step, result)
        apply(machine.stepFinished(result, now: clock.now()))
    }

    private static func stepResult(_ outcome: Result<Void, BackendCallError>, route: BackendFailure.Route) -> StepResult {
        switch outcome {
        case .success: .done
        case .failure(let error): .failed(BackendFailure.classify(error, route: route))
        }
    }

    private func error(for failure: BackendFailure) -> CoreError {
        switch failure {
        case .unauthorized(let status): .unauthorized(user: credentials?.user ?? "?", status: status)
        case .transient(_, let reason): .backendUnavailable(reason)
        case .rejected(let status, let detail): .backendRejected(status: status, detail: detail)
        case .gone: .backendUnavailable("the registration was already gone")
        }
    }
}
