#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import Synchronization

/// The one owner of who is logged in, with which password, at which backend. The
/// registrar and the outbox both ask it; only it reads and writes `credentials.json`.
/// The login in force can be read without a hop onto this actor (`loggedIn`), so the
/// registrar works from it directly instead of keeping a copy of its own.
///
/// The password source runs once at a time, and its last failure is kept for `status`
/// (`PasswordSourceRuns`).
public actor AccountKeeper: Service {
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
    /// The backend URL parsed last, and from what text: the outbox asks for an account's
    /// credentials for each run of messages it hands over.
    private let parsedBackend = Mutex<(text: String, url: URL)?>(nil)
    /// The password source's runs, one at a time, and what `status` shows of them.
    private let runs: PasswordSourceRuns
    /// Since when the password source has been running, while it runs: `status` says so
    /// rather than "talking to the backend".
    public nonisolated var passwordRunningSince: Date? { runs.runningSince }
    /// The keyring's store and clear calls, which `shutdown` stops.
    private let keyringCalls = KeyringCalls()
    /// The session's Secret Service, through the client `password_store` runs.
    private var keyring: SecretServiceKeyring {
        SecretServiceKeyring(tool: settings[\.keyringTool], timeout: settings[\.passwordTimeout])
    }
    /// Why the password source failed last, until it works again.
    public nonisolated var passwordProblem: String? { runs.problem }
    /// The source as the last reload left it.
    private var sourceInEffect: PasswordSource

    /// Loads the saved credentials; the warning says why a file could not be used.
    public init(stateDirectory: String, settings: SettingsStore, fileSystem: FileSystemCalls = .system) {
        self.store = CredentialStore(directory: stateDirectory, calls: fileSystem)
        self.settings = settings
        self.passwords = PasswordProvider(settings: settings)
        self.sourceInEffect = passwords.source
        self.runs = PasswordSourceRuns()
        var (credentials, warning) = store.load()
        // Saved before logins named their origin: it is the one it has been used with.
        if credentials?.origin == nil {
            let backend = credentials?.backend ?? settings[\.backend]
            credentials?.origin = BackendURL.origin(backend)
        }
        self.login = Mutex(credentials)
        self.loadWarning = warning
        settings.subscribe { [weak self] in await self?.settingsChanged() }
    }

    /// Why the credentials file could not be read at start, if it could not.
    public nonisolated let loadWarning: String?

    public nonisolated var passwordSource: PasswordSource { passwords.source }

    /// The login saved: changed only by `commit` and `remove`, once its file is written. It
    /// is in force only at its own origin (`activeLogin`).
    public nonisolated var loggedIn: Credentials? { login.withLock { $0 } }

    /// The login in force: the saved one, while the backend it follows (its own, or the
    /// configured one) is at the origin it was made for. After `backend` moved to another
    /// origin, nobody is logged in there until `notifyctl login` (see `strandedLogin`).
    public nonisolated var activeLogin: Credentials? {
        guard let credentials = loggedIn, appliesHere(credentials) else { return nil }
        return credentials
    }

    /// A login saved for another origin than the backend in force, which it does not follow.
    public nonisolated var strandedLogin: Credentials? {
        guard let credentials = loggedIn, !appliesHere(credentials) else { return nil }
        return credentials
    }

    private nonisolated func appliesHere(_ credentials: Credentials) -> Bool {
        guard let origin = credentials.origin, credentials.api == settings[\.backendAPI] else { return false }
        return BackendURL.origin(backend(of: credentials)) == origin
    }

    /// Why no account can send or register now: nobody logged in, no backend, or a login
    /// made for another backend.
    public nonisolated var noAccountReason: CoreError {
        guard let credentials = loggedIn else { return .notLoggedIn }
        guard let backend = backend(of: credentials) else { return .noBackend }
        if credentials.api != settings[\.backendAPI] {
            return .loginForAnotherAPI(user: credentials.user, api: credentials.api, inForce: settings[\.backendAPI])
        }
        return .loginForAnotherBackend(user: credentials.user, origin: credentials.origin ?? "?", backend: backend)
    }

    private var credentials: Credentials? {
        get { loggedIn }
        set { login.withLock { $0 = newValue } }
    }

    /// The account a message queued now belongs to.
    public nonisolated var currentKey: AccountKey? {
        guard let credentials = activeLogin, let backend = backend(of: credentials) else { return nil }
        return AccountKey(user: credentials.user, backend: backend, api: credentials.api)
    }

    public nonisolated func backend(of credentials: Credentials) -> String? {
        credentials.backend ?? settings[\.backend]
    }

    /// Saves `credentials` and makes them the current login; nothing changes when the
    /// password or the file cannot be written. `checked`: the password source already ran
    /// for this login (while it was being checked), so what it gave is kept rather than
    /// asked for again. Returns where the password went.
    @discardableResult
    public func commit(_ credentials: Credentials, checked: Bool = false) async throws(CoreError) -> PasswordKept {
        await turns.begin()
        defer { turns.end() }
        var marked = credentials
        if marked.origin == nil { marked.origin = BackendURL.origin(backend(of: marked)) }
        let placement = try await keep(&marked)
        let store = self.store, saved = marked
        do {
            try await writer.run { () throws(CoreError) in try store.save(saved) }
        } catch {
            if let item = saved.keyringItem { _ = await clear(SecretServiceKeyring.Item(user: saved.user, id: item)) }
            throw error
        }
        let replaced = self.credentials
        self.credentials = saved
        if !checked { passwords.forget() }
        // The replaced login's keyring item, unless a registration left at its backend
        // still needs it to be deleted there (`release` then removes it).
        var placed = placement
        if let replaced, replaced.keyringItem != nil, let warning = await release(replaced) {
            placed.warning = warning
        }
        return placed
    }

    /// Where `login` keeps the password of `credentials` (`password_store`), marking it in
    /// `credentials` when that is the keyring.
    private func keep(_ credentials: inout Credentials) async throws(CoreError) -> PasswordKept {
        guard passwords.source == .stored, !credentials.password.isEmpty else { return PasswordKept(in: passwords.source.name) }
        let choice = settings[\.passwordStore]
        guard choice != .file else { return PasswordKept(in: "file", detail: "in \(store.path) (mode 0600; password_store = file)") }
        let item = SecretServiceKeyring.Item(user: credentials.user, id: credentials.revision)
        let (keyring, password, backend) = (self.keyring, credentials.password, backend(of: credentials) ?? "?")
        let stored = await keyringCalls.run(whenStopped: .failure(.failed("not stored: notifyd is stopping"))) {
            await keyring.store(password, in: item, backend: backend)
        }
        switch stored {
        case .success:
            credentials.keyringItem = item.id
            return PasswordKept(in: "keyring", detail: "in the keyring (Secret Service)")
        case .failure(.unavailable(let reason)) where choice == .auto:
            return PasswordKept(in: "file", detail: "in \(store.path) (mode 0600): no Secret Service answers in this session (\(reason))")
        case .failure(.noLoginCollection(let said)) where choice == .auto:
            return PasswordKept(in: "file", detail: "in \(store.path) (mode 0600): the Secret Service answered, but it has no login keyring "
                                + "(\(said)); to keep the password there, \(Self.createLoginKeyring) and log in again; "
                                + "to keep it in this file, set password_store = file")
        case .failure(let failure):
            let unlock = switch failure {
            case .locked: "unlock it (Seahorse, or log in to the desktop) and log in again, or "
            case .noLoginCollection: "\(Self.createLoginKeyring) and log in again, or "
            default: ""
            }
            throw .storage("cannot keep the password in the keyring: \(failure); \(unlock)set password_store = file to keep it in a 0600 file instead")
        }
    }

    /// How a user makes the login collection: Seahorse's "New Password Keyring" named
    /// login, or GNOME Keyring's own command, which makes it from a password it reads.
    static let createLoginKeyring = "create it (Seahorse: a new password keyring named \"login\"; or `gnome-keyring-daemon --unlock`, which makes it from a password on standard input)"

    /// The keyring items registrations left at other backends still need for their deletion
    /// (`RetiredRegistrations`, which holds this keeper, answers).
    public nonisolated let keyringItemsHeld = Mutex<(@Sendable () async -> Set<String>)?>(nil)

    /// Removes the keyring item of `credentials`, unless the login in force or a retired
    /// registration uses it; what cannot be removed is said, with the command that removes it.
    @discardableResult
    public func release(_ credentials: Credentials) async -> String? {
        guard let id = credentials.keyringItem, loggedIn?.keyringItem != id else { return nil }
        if let held = keyringItemsHeld.withLock({ $0 }), await held().contains(id) { return nil }
        let item = SecretServiceKeyring.Item(user: credentials.user, id: id)
        guard case .failure(let failure) = await clear(item) else { return nil }
        return "the password of \(credentials.user) stays in the keyring (\(failure)); remove it with `\(SecretServiceKeyring.clearCommand(item))`"
    }

    /// A login is about to be checked: an external password is fetched anew for it.
    public func loginStarted() {
        passwords.forget()
    }

    public enum Removal: Equatable, Sendable {
        /// Another login had replaced it, and was kept.
        case replaced
        /// With a warning when the keyring kept the password.
        case removed(warning: String?)
    }

    /// Forgets the login if it is still the one with `revision` (a login that happened
    /// meanwhile is kept), its password in the keyring too.
    public func remove(revision: String) async throws(CoreError) -> Removal {
        await turns.begin()
        defer { turns.end() }
        guard let removed = credentials, removed.revision == revision else { return .replaced }
        let store = self.store
        try await writer.run { () throws(CoreError) in try store.remove() }
        credentials = nil
        passwords.forget()
        fetchedFor = [:]
        return .removed(warning: await release(removed))
    }

    /// `logout` with nobody logged in: a credentials file that could not be read at start
    /// (damaged, say) may still hold a password, which a logout means to forget. Removes
    /// it, and returns its path; nil when there was none to remove.
    public func removeUnreadableFile() async throws(CoreError) -> String? {
        await turns.begin()
        defer { turns.end() }
        let store = self.store
        guard credentials == nil, loadWarning != nil, FileManager.default.fileExists(atPath: store.path) else { return nil }
        try await writer.run { () throws(CoreError) in try store.remove() }
        return store.path
    }

    /// The credentials of `key` for a backend call, or an error saying why that account
    /// cannot send now (never another account's credentials).
    public func backendAccount(for key: AccountKey) async throws(CoreError) -> BackendAccount {
        guard let credentials = activeLogin, currentKey == key else { throw .accountGone(user: key.user) }
        return try await backendAccount(credentials)
    }

    /// The credentials of `key` when they are at hand: the login in force is that account's
    /// and its password is in memory (stored, or read from the keyring already). Nil when
    /// they must be fetched, or the account cannot send: `backendAccount(for:)` then fetches
    /// them or says why. Read without a hop onto this actor, so that a recipient's first
    /// message goes to the backend in the outbox's turn that accepted it.
    public nonisolated func readyAccount(for key: AccountKey) -> BackendAccount? {
        guard let credentials = activeLogin, fetchedSource(of: credentials) == nil,
              let backend = backend(of: credentials), AccountKey(user: credentials.user, backend: backend, api: credentials.api) == key,
              let url = try? backendURL(backend) else { return nil }
        return BackendAccount(baseURL: url, user: credentials.user, password: credentials.password, api: credentials.api)
    }

    /// The backend call credentials for `credentials`, which need not be saved yet (a
    /// login being checked), for a call to `target` (by default the backend it follows).
    /// This is where a password leaves notifyd: only ever for the origin its login was made
    /// for, whatever the caller asks.
    public func backendAccount(_ credentials: Credentials, at target: String? = nil) async throws(CoreError) -> BackendAccount {
        guard let backend = target ?? backend(of: credentials) else { throw .noBackend }
        let origin = credentials.origin ?? BackendURL.origin(self.backend(of: credentials))
        guard let origin, BackendURL.origin(backend) == origin else {
            throw .loginForAnotherBackend(user: credentials.user, origin: origin ?? "?", backend: backend)
        }
        let password = try await password(of: credentials)
        if passwords.isExternal { fetchedFor[Self.fetchedKey(origin, credentials.api)] = (credentials.user, password) }
        return BackendAccount(baseURL: try backendURL(backend), user: credentials.user, password: password, api: credentials.api)
    }

    /// The last password a password source or systemd credential gave for a login at
    /// `origin`: kept in memory, never written, so that a registration left there when the
    /// backend moves is deleted with that backend's own password, not with what the source
    /// gives now (another backend's, once the source was changed or rotated with it).
    /// Keyed by origin and API: a password and an API key at one origin are two secrets.
    private var fetchedFor: [String: (user: String, password: String)] = [:]

    private static func fetchedKey(_ origin: String, _ api: BackendDialect) -> String {
        api.rawValue + " " + origin
    }

    /// What a registration left at `origin` by `user` is deleted with, when its login's
    /// password is not kept in a file or the keyring: the one fetched for it, if in memory.
    public func passwordInMemory(of user: String, at origin: String, api: BackendDialect = .registrations) -> String? {
        guard let fetched = fetchedFor[Self.fetchedKey(origin, api)], fetched.user == user else { return nil }
        return fetched.password
    }

    /// The credentials to delete a registration left at an old backend with: its own
    /// password (kept with it, in the keyring, or `inMemory`), never the password source in
    /// effect, which serves the backend in use now.
    public func retiredAccount(_ credentials: Credentials, inMemory: String?) async throws(CoreError) -> BackendAccount {
        guard let backend = credentials.backend else { throw .noBackend }
        let password: String
        if !credentials.password.isEmpty {
            password = credentials.password
        } else if let item = credentials.keyringItem {
            password = try await Self.lookUp(SecretServiceKeyring.Item(user: credentials.user, id: item), in: keyring)
        } else if let inMemory {
            password = inMemory
        } else {
            throw .passwordUnavailable("the password of \(credentials.user) there came from password_command or a systemd credential, which now serve another backend, and is no longer in memory")
        }
        return BackendAccount(baseURL: try backendURL(backend), user: credentials.user, password: password, api: credentials.api)
    }

    private nonisolated func backendURL(_ backend: String) throws(CoreError) -> URL {
        // Byte for byte: `==` would take a canonically equivalent spelling for the same.
        if let parsed = parsedBackend.withLock({ $0 }), parsed.text.utf8.elementsEqual(backend.utf8) { return parsed.url }
        guard let url = URL(string: backend) else { throw .invalidArgument("invalid backend URL \(backend)") }
        parsedBackend.withLock { $0 = (backend, url) }
        return url
    }

    /// Where the password of `credentials` is fetched from: the password source, or the
    /// keyring while it has not been read. Nil when it is the one in memory.
    private nonisolated func fetchedSource(of credentials: Credentials) -> PasswordSource? {
        if passwords.isExternal { return passwords.source }
        if let item = credentials.keyringItem, credentials.password.isEmpty { return .keyring(SecretServiceKeyring.Item(user: credentials.user, id: item)) }
        return nil
    }

    /// Nothing to take up: the login was read when it was made.
    public func start() async {}

    /// notifyd stops: a password command or keyring lookup still running is stopped, with
    /// what it started, and none starts again. Called first of all, so that nothing that
    /// stops after it waits for a password that may be minutes away (`password_timeout`).
    public func shutdown() {
        keyringCalls.stop()
        runs.stop()
    }

    /// Removes `item` from the keyring, unless notifyd is stopping.
    private func clear(_ item: SecretServiceKeyring.Item) async -> Result<Void, SecretServiceKeyring.Failure> {
        let keyring = self.keyring
        return await keyringCalls.run(whenStopped: .failure(.failed("not removed: notifyd is stopping"))) { await keyring.clear(item) }
    }

    /// The backend refused the password: an external one, or one in the keyring, is
    /// fetched anew next time.
    public func passwordRefused() {
        passwords.forget()
        if let login = loggedIn, let origin = login.origin { fetchedFor[Self.fetchedKey(origin, login.api)] = nil }
        if let login = credentials, login.keyringItem != nil, !login.password.isEmpty {
            credentials?.password = ""
        }
    }

    /// A reload replaced the settings: `status` reports them (the backend, the password
    /// source), and the last failure of a password source no longer used is forgotten. A
    /// changed source runs for the next request, even when it is a command given back that
    /// gave a password before.
    private func settingsChanged() {
        let source = passwords.source
        if source != sourceInEffect { passwords.forget() }
        sourceInEffect = source
        runs.sourceChanged(to: source)
    }

    /// The password of `credentials`: the stored one, or what the password source gives,
    /// or what the keyring keeps. Sources run once at a time (`PasswordSourceRuns`).
    private func password(of credentials: Credentials) async throws(CoreError) -> String {
        guard let source = fetchedSource(of: credentials) else { return credentials.password }
        let passwords = self.passwords, keyring = self.keyring
        let run = runs.run(of: source) {
            // A task of its own, kept in `runs`: every caller asking for the same source
            // meanwhile awaits this one run, and shutdown cancels it.
            Task {
                do throws(CoreError) {
                    if case .keyring(let item) = source { return .success(try await Self.lookUp(item, in: keyring)) }
                    return .success(try await passwords.password(stored: credentials.password))
                } catch {
                    return .failure(error)
                }
            }
        }
        guard let run else { throw .passwordUnavailable("the password is not fetched: notifyd is stopping") }
        let result = await run.value
        runs.ended(run, of: source, with: result)
        let password = try result.get()
        // Kept in memory for the login in force, as a password command's is.
        if case .keyring = source, self.credentials?.revision == credentials.revision { self.credentials?.password = password }
        return password
    }

    private static func lookUp(_ item: SecretServiceKeyring.Item, in keyring: SecretServiceKeyring) async throws(CoreError) -> String {
        switch await keyring.lookup(item) {
        case .success(let text):
            return try PasswordText.line(Data(text.utf8), from: "the keyring")
        case .failure(.locked):
            throw .passwordUnavailable("the keyring that keeps the password of \(item.user) is locked; unlock it (Seahorse, or log in to the desktop): what waits goes on by itself")
        case .failure(.missing):
            throw .passwordUnavailable("the keyring has no password for \(item.user) any more; log in again with `notifyctl login \(item.user)`")
        case .failure(let failure):
            throw .passwordUnavailable("cannot read the password of \(item.user) from the keyring: \(failure)")
        }
    }
}
