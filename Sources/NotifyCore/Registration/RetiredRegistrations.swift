#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem

/// The registrations of this device at backends it no longer uses. When the backend
/// changes (a reload with another `backend`, a login at another one), the registration at
/// the old backend is deleted there with the login that made it, as `logout` does, so the
/// old backend cannot go on pushing to this device for the old user.
///
/// A deletion that fails for a reason that may pass (the old backend down, throttling, no
/// network) is retried with the backoff, woken like the other parties when the backend is
/// seen back, kept across restarts (`retired-registrations.json`), and shown in `status`.
/// One the backend refuses for good, or one still failing after `giveUpAfter`, is given up
/// with a warning naming the id, so that it can be deleted by hand. Switching back to the
/// old backend before the deletion happened cancels it: the registration is used again
/// (`reclaim`).
public actor RetiredRegistrations: Service {
    /// A backend unreachable for a week has most likely been retired itself; the log then
    /// names what is left there.
    public static let giveUpAfter: Double = 7 * 86400

    /// Each change publishes what `status` shows of them as it is made, not once written:
    /// a `status` in between would show a deletion done as still to do.
    private var entries: [RetiredEntry] {
        didSet { summaryShown.publish(Self.summary(of: entries)) }
    }
    /// What `status` shows, read without a hop onto this actor (`StatusPart`).
    public nonisolated let summaryShown: StatusPart<[RetiredRegistration]>
    private let store: RetiredRegistrationStore
    /// The file is written there, so that an fsync never holds a thread of the pool.
    private let writer = FileWriter(name: "notifyd-retired")
    private let backend: any BackendAPI
    private let accounts: AccountKeeper
    private let settings: SettingsStore
    private let clock: any WakeClock
    private let logger: Logger
    private let recovery: BackendRecovery?
    /// The passwords of entries whose login's password came from a password source: the one
    /// that source gave for that backend, kept in memory only, as the source's own is.
    private var passwordsInMemory: [RetiredEntry.Key: String] = [:]
    /// The entry whose deletion is under way: never reclaimed meanwhile.
    private var deleting: RetiredEntry?
    private var deletion: Task<Void, Never>?
    /// Wakes the next deletion waiting its backoff.
    private var wake = WakeTimer<Date>()
    private var stopped = false
    private var random = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))

    public init(stateDirectory: String, backend: any BackendAPI, accounts: AccountKeeper, settings: SettingsStore,
                clock: any WakeClock = SystemWakeClock(), logger: Logger, recovery: BackendRecovery? = nil, fileSystem: FileSystemCalls = .system) {
        store = RetiredRegistrationStore(directory: stateDirectory, calls: fileSystem)
        let (entries, warning) = store.load()
        if let warning { logger.warning(warning) }
        self.entries = entries
        self.summaryShown = StatusPart(Self.summary(of: entries))
        self.backend = backend
        self.accounts = accounts
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.recovery = recovery
    }

    /// Takes up the deletions the last run left.
    public func start() {
        schedule()
    }

    /// Deletes nothing more, and returns once the deletion under way, if any, has ended.
    public func shutdown() async {
        stopped = true
        wake.cancel()
        await deletion?.value
    }

    /// The keyring items the deletions still need.
    var keyringItems: Set<String> { Set(entries.compactMap(\.keyringItem)) }

    /// What `status` shows.
    public nonisolated var summary: [RetiredRegistration] { summaryShown.current }

    private static func summary(of entries: [RetiredEntry]) -> [RetiredRegistration] {
        entries.map { entry in
            RetiredRegistration(backend: entry.backend, id: entry.id, user: entry.user, since: entry.retiredAt, failures: entry.failures,
                                nextAttemptAt: entry.nextAttemptAt, error: entry.lastError, api: entry.api)
        }
    }

    /// Whether the summary `status` reads is the one the entries give (checked by the
    /// tests' daemons).
    public func summaryShownIsCurrent() -> Bool {
        summaryShown.current == Self.summary(of: entries)
    }

    /// The registration `id` at `backend` is no longer this device's: it is deleted there
    /// with `credentials`, a login made at that backend's origin, and with its own password:
    /// the one saved with it (in this file, 0600, as `credentials.json` keeps it), its
    /// keyring item, or `passwordInMemory`, what its password source gave for it. Returns
    /// once that is on disk, so the state that forgets the id can be saved after it.
    func retire(id: String, backend: String, credentials: Credentials, passwordInMemory: String? = nil) async {
        guard !entries.contains(where: { $0.key == RetiredEntry.Key(id: id, backend: backend, api: credentials.api) }) else { return }
        // A password the keyring keeps stays there: the entry names its item.
        let entry = RetiredEntry(id: id, backend: backend, api: credentials.api == .registrations ? nil : credentials.api, user: credentials.user,
                                 password: credentials.keyringItem == nil ? credentials.password : "",
                                 keyringItem: credentials.keyringItem, retiredAt: clock.now())
        if let passwordInMemory, entry.password.isEmpty, entry.keyringItem == nil { passwordsInMemory[entry.key] = passwordInMemory }
        entries.append(entry)
        logger.notice("the backend changed: deleting \(entry.described), made as \(credentials.user)")
        await save()
        schedule()
    }

    /// A registration is wanted at `backend` again: the retired one there, if its deletion
    /// has not started, is taken back instead of deleted. Returns its id.
    func reclaim(backend: String, api: BackendDialect) async -> String? {
        await takeBack { $0.backend == backend && $0.dialect == api }?.id
    }

    /// The backend gave `id` for this device's new registration (the tutorial's backend
    /// hands back the registration it has for the device): it is in use, not deleted.
    func inUse(id: String, backend: String) async {
        await takeBack { $0.key == RetiredEntry.Key(id: id, backend: backend, api: .registrations) }
    }

    /// Removes the first entry `which` picks whose deletion has not started, and says so.
    @discardableResult
    private func takeBack(_ which: (RetiredEntry) -> Bool) async -> RetiredEntry? {
        guard let index = entries.firstIndex(where: { which($0) && $0.key != deleting?.key }) else { return nil }
        let entry = entries.remove(at: index)
        passwordsInMemory[entry.key] = nil
        logger.notice("\(entry.described) is this device's again, not deleted")
        await save()
        if let warning = await accounts.release(entry.credentials) { logger.warning(warning) }
        schedule()
        return entry
    }

    /// `backend` answered (or was seen back): its deletions waiting their backoff go now.
    func backendWorks(_ backend: String) {
        wakeWaits { $0.backend == backend }
    }

    /// The network may be back: every deletion waiting its backoff goes now.
    func networkChanged() {
        wakeWaits { _ in true }
    }

    private func wakeWaits(_ which: (RetiredEntry) -> Bool) {
        var woken = false
        for index in entries.indices where entries[index].nextAttemptAt != nil && which(entries[index]) {
            entries[index].nextAttemptAt = nil
            woken = true
        }
        if woken { schedule() }
    }

    /// The old backends whose deletions keep a password (in this file or the keyring, or in
    /// memory), each as `logout` names it.
    public var passwordsKept: [String] {
        entries.map { "the password of \($0.user) for \($0.backend), to delete registration \($0.id) there" }
    }

    /// `logout --forget-old-backends`: gives up every deletion still to do, with the
    /// password each kept; returns a line naming each registration left behind.
    public func forgetAll() async -> [String] {
        let given = entries.filter { $0.key != deleting?.key }
        guard !given.isEmpty else { return [] }
        entries.removeAll { entry in given.contains { $0.key == entry.key } }
        for entry in given { passwordsInMemory[entry.key] = nil }
        await save()
        var lines: [String] = []
        for entry in given {
            let line = "gave up deleting registration \(entry.id) at \(entry.backend) (made as \(entry.user)): it stays there until deleted by hand"
            logger.warning(line)
            lines.append(line)
            if let warning = await accounts.release(entry.credentials) { lines.append(warning) }
        }
        schedule()
        return lines
    }

    // MARK: Deleting

    /// Starts the deletion that is due, or sleeps until the next one is.
    private func schedule() {
        recovery?.setWaiting(.retirement, !entries.isEmpty)
        guard !stopped, deleting == nil else { return }
        let now = clock.now()
        if let due = entries.first(where: { ($0.nextAttemptAt ?? now) <= now }) {
            deleting = due
            // Kept in `deletion`: shutdown waits for the one under way.
            deletion = Task { await self.delete(due) }
            return
        }
        guard let next = entries.compactMap(\.nextAttemptAt).min() else { return }
        wake.arm(at: next, on: clock) { await self.wokeUp(at: $0) }
    }

    private func wokeUp(at date: Date) {
        wake.fired(at: date)
        schedule()
    }

    private func delete(_ entry: RetiredEntry) async {
        guard entry.hasPasswordOfItsOwn || passwordsInMemory[entry.key] != nil else {
            // Only the password source in effect could give one now, and it serves another backend.
            entries.removeAll { $0.key == entry.key }
            logger.warning("cannot delete \(entry.described): the password of \(entry.user) there came from password_command "
                           + "or a systemd credential, which now serve another backend, and notifyd has no copy of it (one is kept in memory only, never across a restart); "
                           + "it stays there until deleted by hand")
            deleting = nil
            await save()
            deletion = nil
            schedule()
            return
        }
        let outcome: Result<Void, BackendCallError>
        do throws(CoreError) {
            let account = try await accounts.retiredAccount(entry.credentials, inMemory: passwordsInMemory[entry.key])
            outcome = await backend.deleteRegistration(id: entry.id, account: account)
        } catch {
            outcome = .failure(.transport(error.description))
        }
        let failure: BackendFailure? = switch outcome {
        case .success: nil
        case .failure(let error):
            recovery?.classify(error, route: .delete, backend: entry.backend, api: entry.dialect) ?? BackendFailure.classify(error, route: .delete, api: entry.dialect)
        }
        finished(entry, failure)
        if !entries.contains(where: { $0.key == entry.key }) { passwordsInMemory[entry.key] = nil }
        deleting = nil
        await save()
        if !entries.contains(where: { $0.key == entry.key }), let warning = await accounts.release(entry.credentials) { logger.warning(warning) }
        deletion = nil
        schedule()
    }

    private func finished(_ entry: RetiredEntry, _ failure: BackendFailure?) {
        guard let index = entries.firstIndex(where: { $0.key == entry.key }) else { return }
        let place = entry.described
        switch failure {
        case nil:
            recovery?.backendAnswered(entry.backend)
            entries.remove(at: index)
            logger.notice("deleted \(place)")
        case .gone?:
            entries.remove(at: index)
            logger.notice("\(place) was already gone")
        case .unauthorized(let status)?:
            entries.remove(at: index)
            logger.warning("cannot delete \(place): the backend refused the login of \(entry.user) (HTTP \(status)); it stays there until deleted by hand")
        case .rejected(let status, let detail)?:
            entries.remove(at: index)
            logger.warning("cannot delete \(place): the backend refused (HTTP \(status)\(detail.isEmpty ? "" : ": \(detail)")); it stays there until deleted by hand")
        case .transient(let retryAfter, let reason)?:
            backOff(index, reason: reason, retryAfter: retryAfter, watched: false)
        case .unreachable(let reason, _)?:
            backOff(index, reason: reason, retryAfter: nil, watched: true)
            recovery?.watchForReturn(of: entry.backend)
        case .offline(let reason)?:
            backOff(index, reason: reason, retryAfter: nil, watched: true)
        }
    }

    private func backOff(_ index: Int, reason: String, retryAfter: Double?, watched: Bool) {
        let now = clock.now()
        var entry = entries[index]
        guard now.timeIntervalSince(entry.retiredAt) < Self.giveUpAfter else {
            entries.remove(at: index)
            logger.warning("gave up deleting registration \(entry.id) at \(entry.backend) after 7 days of failures (\(reason)): that backend may be gone for good; it stays there until deleted by hand")
            return
        }
        let backoff = settings[\.policy].backoff
        entry.failures += 1
        entry.lastError = backoff.noted(reason, retryAfter: retryAfter)
        entry.nextAttemptAt = now.addingTimeInterval(backoff.delay(failures: entry.failures, retryAfter: retryAfter, unit: random.nextUnit(), watched: watched))
        entries[index] = entry
        logger.warning("cannot delete registration \(entry.id) at \(entry.backend) yet: \(reason); will retry")
    }

    private func save() async {
        let (store, entries) = (self.store, self.entries)
        do {
            try await writer.run { () throws(CoreError) in try store.save(entries) }
        } catch {
            logger.error("\(error.description); the registrations left at old backends may not be deleted after a restart")
        }
    }
}
