#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The one owner of who is logged in, with which password, at which backend. The
/// registrar and the outbox both ask it; only it reads and writes `credentials.json`.
/// The login in force can be read without a hop onto this actor (`loggedIn`), so the
/// registrar works from it directly instead of keeping a copy of its own.
///
/// The password source runs once at a time: callers arriving while it runs wait for that
/// run (a `pass` or pinentry prompt appears once, not once per waiting message). Its last
/// failure is kept for `status` until a run succeeds.
public actor AccountKeeper {
    private let store: CredentialStore
    /// `credentials.json` is written there, and awaited, so that an fsync never holds a
    /// thread of the Swift concurrency pool.
    private let writer = FileWriter(name: "notifyd-account")
    /// One save or removal at a time (see `Turns`): a logout checked while a new login was
    /// being saved would remove that login.
    let turns = Turns()
    /// `backend` (for a login naming none) and the password source, read where used.
    private let settings: SettingsStore
    private let passwords: PasswordProvider
    private let login: Mutex<Credentials?>
    /// The password source's run under way, the source it runs, and since when.
    private var fetching: (source: PasswordSource, run: Task<Result<String, CoreError>, Never>, since: Date)?
    /// Since when the password source has been running, while it runs: `status` says so
    /// rather than "talking to the backend".
    public var passwordRunningSince: Date? { fetching?.since }
    /// Why the password source failed last, until it works again.
    public private(set) var passwordProblem: String? {
        didSet { statusChanges.bump() }
    }
    /// The source that failed.
    private var problemSource: PasswordSource?
    /// The source as the last reload left it.
    private var sourceInEffect: PasswordSource
    /// Bumped by this keeper, the registrar and the outbox it serves, for `status`.
    public nonisolated let statusChanges = StatusChanges()

    /// Loads the saved credentials; the warning says why a file could not be used.
    public init(stateDirectory: String, settings: SettingsStore, fileSystem: FileSystemCalls = .system) {
        self.store = CredentialStore(directory: stateDirectory, calls: fileSystem)
        self.settings = settings
        self.passwords = PasswordProvider(settings: settings)
        self.sourceInEffect = passwords.source
        let (credentials, warning) = store.load()
        self.login = Mutex(credentials)
        self.loadWarning = warning
        settings.subscribe { [weak self] in await self?.settingsChanged() }
    }

    /// Why the credentials file could not be read at start, if it could not.
    public nonisolated let loadWarning: String?

    public nonisolated var passwordSource: PasswordSource { passwords.source }

    /// The login in force: changed only by `commit` and `remove`, once its file is written.
    public nonisolated var loggedIn: Credentials? { login.withLock { $0 } }

    private var credentials: Credentials? {
        get { loggedIn }
        set {
            login.withLock { $0 = newValue }
            statusChanges.bump()
        }
    }

    /// The account a message queued now belongs to.
    public nonisolated var currentKey: AccountKey? {
        guard let credentials = loggedIn, let backend = backend(of: credentials) else { return nil }
        return AccountKey(user: credentials.user, backend: backend)
    }

    public nonisolated func backend(of credentials: Credentials) -> String? {
        credentials.backend ?? settings[\.backend]
    }

    /// Saves `credentials` and makes them the current login; nothing changes when the
    /// file cannot be written. `checked`: the password source already ran for this login
    /// (while it was being checked), so what it gave is kept rather than asked for again.
    public func commit(_ credentials: Credentials, checked: Bool = false) async throws(CoreError) {
        await turns.begin()
        defer { turns.end() }
        let store = self.store
        try await writer.run { () throws(CoreError) in try store.save(credentials) }
        self.credentials = credentials
        if !checked { passwords.forget() }
    }

    /// A login is about to be checked: an external password is fetched anew for it.
    public func loginStarted() {
        passwords.forget()
    }

    /// Forgets the login if it is still the one with `revision` (a login that happened
    /// meanwhile is kept). Returns false when another login had replaced it.
    public func remove(revision: String) async throws(CoreError) -> Bool {
        await turns.begin()
        defer { turns.end() }
        guard credentials?.revision == revision else { return false }
        let store = self.store
        try await writer.run { () throws(CoreError) in try store.remove() }
        credentials = nil
        passwords.forget()
        return true
    }

    /// The credentials of `key` for a backend call, or an error saying why that account
    /// cannot send now (never another account's credentials).
    public func backendAccount(for key: AccountKey) async throws(CoreError) -> BackendAccount {
        guard let credentials, currentKey == key else { throw .accountGone(user: key.user) }
        return try await backendAccount(credentials)
    }

    /// The backend call credentials for `credentials`, which need not be saved yet (a
    /// login being checked).
    public func backendAccount(_ credentials: Credentials) async throws(CoreError) -> BackendAccount {
        guard let backend = backend(of: credentials) else { throw .noBackend }
        guard let url = URL(string: backend) else { throw .invalidArgument("invalid backend URL \(backend)") }
        return BackendAccount(baseURL: url, user: credentials.user, password: try await password(stored: credentials.password))
    }

    /// notifyd stops: a password command still running is stopped with what it started.
    public func shutdown() {
        fetching?.run.cancel()
        fetching = nil
    }

    /// The backend refused the password: an external one is fetched anew next time.
    public func passwordRefused() {
        passwords.forget()
    }

    /// A reload replaced the settings: `status` reports them (the backend, the password
    /// source), and the last failure of a password source no longer used is forgotten. A
    /// changed source runs for the next request, even when it is a command given back that
    /// gave a password before.
    private func settingsChanged() {
        let source = passwords.source
        if source != sourceInEffect { passwords.forget() }
        sourceInEffect = source
        if let fetching, fetching.source != source {
            // A command replaced while it runs (one that hangs, say) is stopped, with what it started.
            fetching.run.cancel()
            self.fetching = nil
        }
        if passwordProblem != nil, problemSource != source { passwordProblem = nil }
        statusChanges.bump()
    }

    private func password(stored: String) async throws(CoreError) -> String {
        guard passwords.isExternal else { return stored }
        let run: Task<Result<String, CoreError>, Never>
        let source = passwords.source
        if let fetching, fetching.source == source {
            run = fetching.run
        } else {
            let passwords = self.passwords
            run = Task {
                do throws(CoreError) {
                    return .success(try await passwords.password(stored: stored))
                } catch {
                    return .failure(error)
                }
            }
            fetching = (source, run, Date())
        }
        let result = await run.value
        if fetching?.run == run {
            fetching = nil
            switch result {
            case .success: passwordProblem = nil
            case .failure(let error):
                passwordProblem = error.description
                problemSource = source
            }
        }
        return try result.get()
    }
}
