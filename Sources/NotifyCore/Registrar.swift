#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Drives `RegistrationMachine`: owns the device state, makes the backend calls the machine
/// asks for (with the credentials `AccountKeeper` holds), keeps its one wake-up timer, saves
/// state, publishes status changes and answers each caller waiting for the outcome of its
/// own change.
///
/// A login made while a device token is set is a trial: the next registration pass uses
/// the new credentials, and they are saved only once the backend did not refuse them.
public actor Registrar {
    public struct Settings: Sendable {
        /// The backend used when the login did not name one.
        public var configuredBackend: String?
        public var policy: RegistrationPolicy
        /// The platform of a first token set without `--platform`.
        public var defaultPlatform: Platform
        /// The name this backend knows Android by (`fcm` or `gcm`), for either name given.
        public var androidName: Platform
        /// `allow_insecure_http`: plain http to a backend on another machine is accepted.
        public var allowInsecureHTTP: Bool

        public init(configuredBackend: String?, policy: RegistrationPolicy = RegistrationPolicy(), defaultPlatform: Platform = .apns, androidName: Platform = .fcm,
                    allowInsecureHTTP: Bool = false) {
            self.configuredBackend = configuredBackend
            self.allowInsecureHTTP = allowInsecureHTTP
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
        /// Why the password command or systemd credential failed last, until it works again.
        public var passwordProblem: String?
    }

    /// A login being answered: its revision, and whether it waits for the backend's check.
    public struct PendingLogin: Sendable {
        public var revision: String
        public var generation: Int
        var checked: Bool
    }

    private let settings: Settings
    private let stateStore: StateStore
    private let accounts: AccountKeeper
    private let backend: any BackendAPI
    private let clock: any WakeClock
    let logger: Logger
    private let onStatus: @Sendable (RegistrationStatus) -> Void
    private let onAccountChange: @Sendable () async -> Void

    // What `status` reports: each change is counted (`StatusChanges`).
    private var device: DeviceState {
        didSet { accounts.statusChanges.bump() }
    }
    /// The saved login, as `accounts` holds it; changed only here, together with it.
    private var credentials: Credentials? {
        didSet { accounts.statusChanges.bump() }
    }
    /// A login waiting for the backend's check; registration passes use it meanwhile.
    private var trial: Credentials?
    private var trialCommitting = false
    private var loginVerdicts: [String: LoginVerdict] = [:]
    private var machine: RegistrationMachine {
        didSet { accounts.statusChanges.bump() }
    }
    private var wakeTask: Task<Void, Never>?
    private var stepTask: Task<Void, Never>?
    /// The login the backend call in flight uses.
    private var stepRevision: String?
    private var waiters: [UInt64: Waiter] = [:]
    private var nextWaiterID: UInt64 = 0
    private var lastPublished: RegistrationStatus?

    /// What a caller waits for: its own outcome, not a counter other commands move too.
    private enum Awaited {
        /// The change that raised the machine's generation to this is settled.
        case generation(Int)
        /// The deletion asked for at this generation has ended.
        case deletion(Int)
        /// The login with this revision was accepted, refused or saved unchecked.
        case login(revision: String)
    }

    private struct Waiter {
        var awaited: Awaited
        /// Resumed with true when the outcome is known, false when the wait ran out.
        var continuation: CheckedContinuation<Bool, Never>
    }

    private enum LoginVerdict: Equatable {
        case accepted
        /// Saved without a check (the backend could not be reached, or nothing to register).
        case unchecked
        case refused(user: String, status: Int)
        case notSaved(CoreError)
        case superseded
    }

    public init(
        settings: Settings, stateDirectory: String, backend: any BackendAPI, accounts: AccountKeeper? = nil,
        clock: any WakeClock = SystemWakeClock(), logger: Logger, onStatus: @escaping @Sendable (RegistrationStatus) -> Void = { _ in },
        onAccountChange: @escaping @Sendable () async -> Void = {}
    ) {
        self.settings = settings
        let accounts = accounts ?? AccountKeeper(stateDirectory: stateDirectory, configuredBackend: settings.configuredBackend, passwords: PasswordProvider(source: .stored))
        self.accounts = accounts
        self.stateStore = StateStore(directory: stateDirectory)
        self.backend = backend
        self.clock = clock
        self.logger = logger
        self.onStatus = onStatus
        self.onAccountChange = onAccountChange
        let (state, stateWarning) = stateStore.load()
        let credentials = accounts.savedAtStart
        if let stateWarning { logger.warning(stateWarning) }
        if let credentialsWarning = accounts.loadWarning { logger.warning(credentialsWarning) }
        self.device = state
        self.credentials = credentials
        self.machine = RegistrationMachine(
            inputs: Self.inputs(device: state, account: credentials, settings: settings),
            record: state.registration, policy: settings.policy, seed: UInt64.random(in: 0...UInt64.max))
    }

    // MARK: Commands

    /// Looks once after start: refreshes when the last success is older than the interval.
    public func start() {
        apply(machine.start(now: clock.now()))
    }

    /// Returns the generation to wait on. A change that cannot be saved is not made.
    public func setToken(_ raw: String, platform: Platform?) throws(CoreError) -> Int {
        let platform = platform ?? (device.token == nil ? settings.defaultPlatform : device.platform)
        var changed = device
        changed.token = try DeviceToken.normalize(raw, for: platform)
        changed.platform = platform
        changed.enabled = true
        return try change(to: changed)
    }

    public func setTags(_ tags: [String]) throws(CoreError) -> Int {
        var changed = device
        changed.tags = try RegistrationTags.validate(tags)
        changed.enabled = true
        return try change(to: changed)
    }

    /// `password` may be nil when it comes from a command or a systemd credential. With a
    /// device token set, the new credentials are checked by a registration pass before they
    /// are saved (`loginOutcome` tells the verdict); without one they are saved at once.
    public func login(user: String, password: String?, backend: String?) async throws(CoreError) -> PendingLogin {
        try Credentials.validateUser(user)
        let external = accounts.passwordSource != .stored
        let password = password ?? ""
        if password.isEmpty && !external {
            throw .invalidArgument("no password given (and no password_command or systemd credential is configured)")
        }
        let chosen = try backend.map { (url: String) throws(CoreError) in try BackendURL.validate(url, allowInsecureHTTP: settings.allowInsecureHTTP) }
        guard chosen ?? settings.configuredBackend != nil else { throw .noBackend }
        // An external password is never stored: it is fetched when needed.
        let candidate = Credentials(user: user, password: external ? "" : password, backend: chosen)
        if device.token == nil {
            var enabled = device
            enabled.enabled = true
            try save(enabled)
            device = enabled
            try await accounts.commit(candidate)
            credentials = candidate
            logger.notice("logged in as \(user) at \(chosen ?? settings.configuredBackend ?? "?"); the credentials are checked at the first registration")
            loginVerdicts[candidate.revision] = .unchecked
            apply(machine.update(inputs, now: clock.now()))
            await onAccountChange()
            return PendingLogin(revision: candidate.revision, generation: machine.generation, checked: false)
        }
        // The only wait of a checked login comes first, so that what follows sees one state.
        await accounts.loginStarted()
        var enabled = device
        enabled.enabled = true
        try save(enabled)
        device = enabled
        if let earlier = trial { loginVerdicts[earlier.revision] = .superseded }
        trial = candidate
        logger.notice("checking the credentials of \(user) at \(chosen ?? settings.configuredBackend ?? "?") with a registration")
        apply(machine.update(inputs, now: clock.now()))
        // A pass with the new credentials checks them, even when nothing else changed.
        if stepRevision != candidate.revision { apply(machine.forceRegister(now: clock.now())) }
        return PendingLogin(revision: candidate.revision, generation: machine.generation, checked: true)
    }

    /// Waits (bounded) for the verdict on a login: the registration outcome when the
    /// credentials were accepted or saved, an error when the backend refused them.
    public func loginOutcome(_ pending: PendingLogin, timeout: Double?) async throws(CoreError) -> RegistrationOutcome {
        if pending.checked, loginVerdicts[pending.revision] == nil, let timeout, timeout > 0 {
            _ = await wait(for: .login(revision: pending.revision), timeout: timeout)
        }
        switch loginVerdicts.removeValue(forKey: pending.revision) {
        case .refused(let user, let status):
            throw .loginRefused(user: user, status: status, previous: credentials?.user)
        case .notSaved(let error):
            throw error
        case .superseded:
            throw .invalidArgument("a later login replaced this one before the backend answered")
        case .accepted, .unchecked:
            var outcome = await waitForOutcome(generation: pending.generation, timeout: pending.checked ? timeout : 0)
            if !pending.checked, outcome.registration.state == .noToken {
                outcome.registration.message = "no device token yet: the credentials will be checked at the first registration (after `notifyctl set-token TOKEN`)"
                outcome.settled = true
            }
            return outcome
        case nil:
            return RegistrationOutcome(registration: machine.status, settled: false)
        }
    }

    public func forceRegister() throws(CoreError) -> Int {
        var enabled = device
        enabled.enabled = true
        try save(enabled)
        device = enabled
        apply(machine.forceRegister(now: clock.now()))
        return machine.generation
    }

    /// Deletes the registration at the backend (404/410/500 count as already gone) and
    /// stops registering until `register` or a change.
    public func unregister() async throws(CoreError) -> UnregisterResult {
        device.enabled = false
        apply(machine.requestDeletion(now: clock.now()))
        let generation = machine.generation
        // Waits for this deletion itself: a pass in flight that fails first is not its answer.
        _ = await wait(for: .deletion(generation), timeout: 300)
        let outcome = RegistrationOutcome(registration: machine.status, settled: machine.settledGeneration >= generation)
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
        guard let loggedIn = credentials else { throw .notLoggedIn }
        let user = loggedIn.user
        var deletedId: String?
        var warning: String?
        do {
            deletedId = try await unregister().deletedId
        } catch {
            guard force else { throw .stillLoggedIn(because: error) }
            warning = "the registration could not be deleted (\(error.description)); forgot the credentials anyway"
            logger.warning(warning!)
        }
        // Only the login this logout started with: one made meanwhile is kept.
        guard try await accounts.remove(revision: loggedIn.revision) else {
            let kept = "a login made meanwhile replaced \(user)'s credentials; it was kept"
            logger.notice(kept)
            return LogoutResult(user: user, deletedId: deletedId, warning: [warning, kept].compactMap { $0 }.joined(separator: "; "))
        }
        if credentials?.revision == loggedIn.revision { credentials = nil }
        // The credentials are gone whatever happens to state.json: the machine must know.
        var enabled = device
        enabled.enabled = true
        do {
            try save(enabled)
        } catch {
            logger.warning(error.description)
        }
        device = enabled
        apply(machine.update(inputs, now: clock.now()))
        await onAccountChange()
        logger.notice("logged out \(user)")
        return LogoutResult(user: user, deletedId: deletedId, warning: warning)
    }

    /// Waits until the outcome of `generation` is known, or `timeout` seconds pass.
    public func waitForOutcome(generation: Int, timeout: Double?) async -> RegistrationOutcome {
        if machine.settledGeneration < generation, let timeout, timeout > 0 {
            _ = await wait(for: .generation(generation), timeout: timeout)
        }
        return RegistrationOutcome(registration: machine.status, settled: machine.settledGeneration >= generation)
    }

    public func snapshot() async -> Snapshot {
        let passwordProblem = await accounts.passwordProblem
        return Snapshot(device: device, user: credentials?.user, backend: effectiveBackend, registration: machine.status,
                        passwordProblem: passwordProblem)
    }

    public var registrationStatus: RegistrationStatus { machine.status }

    /// Counts the changes to what `status` reports, here and in the account keeper and
    /// the outbox that share it.
    public nonisolated var statusChanges: StatusChanges { accounts.statusChanges }

    public var passwordSource: PasswordSource { accounts.passwordSource }

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
            waiter.continuation.resume(returning: false)
        }
    }

    // MARK: Driving the machine

    private var effectiveBackend: String? { credentials?.backend ?? settings.configuredBackend }

    private var stateToSave: DeviceState {
        var state = device
        state.registration = machine.record
        return state
    }

    private static func inputs(device: DeviceState, account: Credentials?, settings: Settings) -> RegistrationInputs {
        RegistrationInputs(
            token: device.token, platform: device.platform, tags: device.tags, account: account?.reference,
            backend: account?.backend ?? settings.configuredBackend, enabled: device.enabled)
    }

    /// What registration passes use: a login being checked, else the saved one.
    private var inputs: RegistrationInputs {
        Self.inputs(device: device, account: trial ?? credentials, settings: settings)
    }

    /// Saves `changed` as the device state, and only then makes it the state the machine
    /// works from: a change that cannot be saved does not take effect.
    private func change(to changed: DeviceState) throws(CoreError) -> Int {
        try save(changed)
        device = changed
        apply(machine.update(inputs, now: clock.now()))
        return machine.generation
    }

    private func save(_ changed: DeviceState) throws(CoreError) {
        var state = changed
        state.registration = machine.record
        do {
            try stateStore.save(state)
        } catch {
            throw .storage("\(error.description); the change was not saved and nothing changed")
        }
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
        saveTrialIfNothingWillCheckIt()
        releaseWaiters()
    }

    private func isKnown(_ awaited: Awaited) -> Bool {
        switch awaited {
        case .generation(let generation): machine.settledGeneration >= generation
        case .deletion(let generation): (machine.lastDeletion?.generation ?? -1) >= generation
        case .login(let revision): loginVerdicts[revision] != nil
        }
    }

    /// Waits until `awaited` is known (true) or `timeout` seconds pass (false).
    private func wait(for awaited: Awaited, timeout: Double) async -> Bool {
        if isKnown(awaited) { return true }
        let id = nextWaiterID
        nextWaiterID += 1
        return await withCheckedContinuation { continuation in
            waiters[id] = Waiter(awaited: awaited, continuation: continuation)
            Task {
                try? await Task.sleep(for: .seconds(timeout))
                self.expireWaiter(id)
            }
        }
    }

    private func releaseWaiters() {
        for (id, waiter) in waiters where isKnown(waiter.awaited) {
            waiters[id] = nil
            waiter.continuation.resume(returning: true)
        }
    }

    private func expireWaiter(_ id: UInt64) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.continuation.resume(returning: false)
    }

    // MARK: Logins being checked

    /// How a step made with the login being checked decides it; nil while its pass goes on.
    private func judge(_ result: StepResult, user: String) -> LoginVerdict? {
        switch result {
        case .created, .failed(.gone): nil
        case .done, .failed(.rejected): .accepted
        case .failed(.unauthorized(let status)): .refused(user: user, status: status)
        case .failed(.transient): .unchecked
        }
    }

    /// Saves the checked (or uncheckable) login and makes it the one in force.
    private func commitTrial(_ candidate: Credentials, _ verdict: LoginVerdict) async {
        do {
            try await accounts.commit(candidate, checked: verdict == .accepted)
        } catch {
            logger.error("\(error.description); the login of \(candidate.user) was not saved")
            if trial?.revision == candidate.revision {
                trial = nil
                apply(machine.update(inputs, now: clock.now()))
            }
            loginVerdicts[candidate.revision] = .notSaved(error)
            releaseWaiters()
            return
        }
        credentials = candidate
        if trial?.revision == candidate.revision { trial = nil }
        loginVerdicts[candidate.revision] = verdict
        logger.notice("logged in as \(candidate.user)\(verdict == .accepted ? "" : " (the credentials could not be checked yet)")")
        apply(machine.update(inputs, now: clock.now()))
        await onAccountChange()
    }

    /// A login waits for a registration pass; when none will come (the registration was
    /// turned off meanwhile), it is saved unchecked rather than left hanging.
    private func saveTrialIfNothingWillCheckIt() {
        guard let candidate = trial, !trialCommitting, !machine.isBusy, machine.settledGeneration >= machine.generation else { return }
        trialCommitting = true
        Task {
            await self.commitTrial(candidate, .unchecked)
            self.trialCommitting = false
        }
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
        guard let credentials = trial ?? credentials else {
            // Logged out while the step was being decided; tell the machine nothing was sent.
            Task { await self.finished(step, .failed(.transient(retryAfter: nil, reason: "not logged in")), with: nil) }
            return
        }
        let backendText: String
        switch step {
        case .createId(_, let backend), .delete(_, let backend): backendText = backend
        case .upsert(_, let target): backendText = target.backend
        }
        guard let url = URL(string: backendText) else {
            Task { await self.finished(step, .failed(.rejected(status: 0, detail: "invalid backend URL \(backendText)")), with: credentials) }
            return
        }
        logger.info(Self.describe(step, user: credentials.user))
        stepRevision = credentials.revision
        let backend = self.backend
        let settings = self.settings
        let accounts = self.accounts
        stepTask = Task {
            var account: BackendAccount
            do {
                account = try await accounts.backendAccount(credentials)
                // The step's backend: a registration is deleted where it was made.
                account.baseURL = url
            } catch {
                self.logger.error("\(error)")
                await self.finished(step, .failed(.transient(retryAfter: nil, reason: "\(error)")), with: credentials)
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
            await self.finished(step, result, with: credentials)
        }
    }

    private func finished(_ step: RegistrationStep, _ result: StepResult, with used: Credentials?) async {
        stepTask = nil
        stepRevision = nil
        let checking = used.flatMap { used in trial?.revision == used.revision ? trial : nil }
        let verdict = checking.flatMap { judge(result, user: $0.user) }
        // A refused login being checked is reported as such below, not as a stop.
        if case .refused = verdict {} else { log(step, result) }
        let commit = checking != nil && (verdict == .accepted || verdict == .unchecked) && !trialCommitting
        if commit { trialCommitting = true }
        if let checking, let verdict, case .refused(_, let status) = verdict {
            // Back to the saved login before the machine looks at its inputs again.
            trial = nil
            loginVerdicts[checking.revision] = verdict
            logger.warning("the backend refused the login of \(checking.user) (HTTP \(status)); it was not saved")
            apply(machine.stepFinished(result, now: clock.now()))
            apply(machine.update(inputs, now: clock.now()))
        } else {
            apply(machine.stepFinished(result, now: clock.now()))
        }
        if case .failed(.unauthorized) = result { await accounts.passwordRefused() }
        if commit, let checking, let verdict {
            await commitTrial(checking, verdict)
            trialCommitting = false
        }
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
