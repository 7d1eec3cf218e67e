#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The registrar's side of `RegistrationMachine`: its inputs, applying what it asks for,
/// saving state, the wake-up timer and the callers waiting on an outcome.
extension Registrar {
    var stateToSave: DeviceState {
        var state = device
        state.registration = machine.record
        return state
    }

    /// The platform is the one the backend is given (Android under `android_name`), so that
    /// a reload or a restart with another `android_name` registers the device again.
    static func inputs(device: DeviceState, account: Credentials?, settings: RuntimeSettings) -> RegistrationInputs {
        let platform = device.platform.atBackend(android: settings.androidName)
        return RegistrationInputs(
            token: device.token, platform: platform, tags: device.tags, account: account?.reference,
            backend: account?.backend ?? settings.backend, api: settings.backendAPI, enabled: device.enabled)
    }

    /// What registration passes use: a login being checked, else the saved one.
    var inputs: RegistrationInputs {
        Self.inputs(device: device, account: trial ?? credentials, settings: settings.current)
    }

    /// Saves `changed` as the device state, and only then makes it the state the machine
    /// works from: a change that cannot be saved does not take effect. Called in a turn
    /// (`turns`), as is everything here that changes the state.
    func change(to changed: DeviceState) async throws(CoreError) -> Int {
        try await save(changed)
        device = changed
        await apply(machine.update(inputs, now: clock.now()))
        return machine.generation
    }

    /// Turns registration on or off after a login or a logout. It takes effect even if the
    /// state cannot be saved: the credentials it follows are saved (or removed) already.
    func setRegistration(enabled: Bool) async {
        var changed = device
        changed.enabled = enabled
        do {
            try await save(changed)
        } catch {
            logger.warning(error.description)
        }
        device = changed
        await apply(machine.update(inputs, now: clock.now()))
    }

    func save(_ changed: DeviceState) async throws(CoreError) {
        var state = changed
        state.registration = machine.record
        let stateStore = self.stateStore
        do {
            try await writer.run { [state] () throws(CoreError) in try stateStore.save(state) }
        } catch {
            throw .storage("\(error.description); the change was not saved and nothing changed")
        }
    }

    func apply(_ actions: [RegistrationAction]) async {
        for action in actions {
            switch action {
            case .perform(let step): perform(step)
            case .wake(let date): scheduleWake(at: date)
            case .cancelWake: wake.cancel()
            case .persist: await persist()
            case .retire(let id, let backend, let user, let api): await retire(id: id, at: backend, api: api, madeAs: user)
            }
        }
        let status = machine.status
        if status != lastPublished {
            lastPublished = status
            onStatus(status)
        }
        checkTrialIfNoPassWill()
        unknownPlatforms.update(machine.record.refusedPlatforms)
        recovery?.setWaiting(.registrar, machine.waitsOnBackend)
        recovery?.setOffline(.registrar, since: machine.offlineSince)
        releaseWaiters()
    }

    func isKnown(_ awaited: Awaited) -> Bool {
        switch awaited {
        case .generation(let generation): machine.settledGeneration >= generation
        case .deletion(let generation): (machine.lastDeletion?.generation ?? -1) >= generation
        case .login(let revision): loginVerdicts[revision] != nil
        }
    }

    /// Waits until `awaited` is known, returning the status then, or until `timeout`
    /// seconds pass (nil).
    @discardableResult
    func wait(for awaited: Awaited, timeout: Double) async -> RegistrationStatus? {
        await changesSaved()
        if isKnown(awaited) { return machine.status }
        let id = nextWaiterID
        nextWaiterID += 1
        // A continuation: the waiter is resumed by whichever comes first, the outcome
        // (`releaseWaiters`) or its deadline (`waitersTimedOut`), each removing it once.
        return await withCheckedContinuation { continuation in
            let deadline = ContinuousClock.now + .seconds(timeout)
            waiters[id] = Waiter(awaited: awaited, continuation: continuation, deadline: deadline)
            armWaiterTimer(deadline)
        }
    }

    /// One timer for every waiter's deadline (`DeadlineTimer`).
    private func armWaiterTimer(_ deadline: ContinuousClock.Instant) {
        waiterTimer.arm(for: deadline) { await self.waitersTimedOut(at: $0) }
    }

    private func waitersTimedOut(at deadline: ContinuousClock.Instant) {
        waiterTimer.fired(at: deadline)
        let now = ContinuousClock.now
        for (id, waiter) in waiters where waiter.deadline <= now {
            waiters[id] = nil
            waiter.continuation.resume(returning: nil)
        }
        if let next = waiters.values.map(\.deadline).min() { armWaiterTimer(next) }
    }

    /// Returns once the change under way, if any, is saved: an outcome a caller is told
    /// comes from the state on disk, as when each change was made and saved in one go.
    func changesSaved() async {
        await turns.begin()
        turns.end()
    }

    func releaseWaiters() {
        for (id, waiter) in waiters where isKnown(waiter.awaited) {
            waiters[id] = nil
            waiter.continuation.resume(returning: machine.status)
        }
        // No waiter left: nothing for the timer to wake the daemon for.
        if waiters.isEmpty { waiterTimer.cancel() }
    }

    func scheduleWake(at date: Date) {
        wake.arm(at: date, on: clock) { await self.wokeUp(at: $0) }
    }

    func wokeUp(at date: Date) async {
        await turns.begin()
        defer { turns.end() }
        wake.fired(at: date)
        await apply(machine.wake(now: clock.now()))
    }

    /// Hands the registration left at `backend` over for deletion there, with a login made
    /// at that backend's origin (the saved one, stranded there once the backend moved, or
    /// the one on trial), the one that made it first: never with another origin's password.
    func retire(id: String, at backend: String, api: BackendDialect, madeAs user: String?) async {
        let origin = BackendURL.origin(backend)
        let candidates = [accounts.loggedIn, trial].compactMap { $0 }.filter { $0.origin != nil && $0.origin == origin && $0.api == api }
        guard let login = candidates.first(where: { $0.user == user }) ?? candidates.first, let origin else {
            let what = api == .installations ? "installation" : "registration"
            logger.warning("\(what) \(id) at \(backend) is no longer used, but no login made there is left to delete it with; it stays there until deleted by hand")
            return
        }
        if let retired {
            let inMemory = await accounts.passwordInMemory(of: login.user, at: origin, api: api)
            await retired.retire(id: id, backend: backend, credentials: login, passwordInMemory: inMemory)
        }
    }

    /// Saves the state as it stands; the steps that follow wait for it (a new registration
    /// id is on disk before a request uses it).
    func persist() async {
        let (stateStore, state) = (self.stateStore, stateToSave)
        do {
            try await writer.run { () throws(CoreError) in try stateStore.save(state) }
        } catch {
            logger.error("\(error.description); the registration will be redone after a restart")
        }
    }
}
