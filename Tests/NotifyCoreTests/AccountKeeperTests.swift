import Foundation
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The one owner of the login: what it saves, what it hands out, and to whom.
struct AccountKeeperTests {
    static let backend = "http://127.0.0.1:1"

    @Test func aLogoutOfAnEarlierLoginKeepsTheNewerOne() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: SettingsStore(.init(backend: Self.backend)))
        let alice = Credentials(user: "alice", password: "alice", backend: nil, origin: BackendURL.origin(Self.backend))
        let bob = Credentials(user: "bob", password: "bob", backend: nil, origin: BackendURL.origin(Self.backend))
        try await keeper.commit(alice)
        try await keeper.commit(bob)
        #expect(try await keeper.remove(revision: alice.revision) == .replaced)
        #expect(keeper.loggedIn == bob)
        #expect(CredentialStore(directory: directory.path).load().0?.revision == bob.revision)
        #expect(try await keeper.remove(revision: bob.revision) == .removed(warning: nil))
        #expect(keeper.loggedIn == nil)
    }

    @Test func credentialsAreHandedOutOnlyForTheirOwnAccount() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: SettingsStore(.init(backend: Self.backend)))
        try await keeper.commit(Credentials(user: "bob", password: "bob", backend: nil))
        let alice = AccountKey(user: "alice", backend: Self.backend)
        let refused = await #expect(throws: CoreError.self) { try await keeper.backendAccount(for: alice) }
        #expect(refused == .accountGone(user: "alice"))
        #expect(try await keeper.backendAccount(for: AccountKey(user: "bob", backend: Self.backend)).user == "bob")
    }

    /// A login's password is handed out only for calls to its own origin, whoever asks: a
    /// call to another backend, or a login whose backend has moved to another origin, gets
    /// the reason instead. Another path at the same origin is the same server.
    @Test func aPasswordIsHandedOutOnlyForItsOwnOrigin() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let settings = SettingsStore(.init(backend: Self.backend))
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: settings)
        let bob = Credentials(user: "bob", password: "bob", backend: nil)
        try await keeper.commit(bob)
        #expect(keeper.loggedIn?.origin == "http://127.0.0.1:1")
        #expect(try await keeper.backendAccount(bob, at: Self.backend + "/app").password == "bob")
        let elsewhere = await #expect(throws: CoreError.self) { try await keeper.backendAccount(bob, at: "http://127.0.0.1:2") }
        #expect(elsewhere == .loginForAnotherBackend(user: "bob", origin: "http://127.0.0.1:1", backend: "http://127.0.0.1:2"))

        await settings.publish(.init(backend: "http://127.0.0.1:2"))
        #expect(keeper.activeLogin == nil && keeper.currentKey == nil)
        #expect(keeper.strandedLogin?.user == "bob")
        let moved = await #expect(throws: CoreError.self) { try await keeper.backendAccount(keeper.loggedIn!) }
        #expect(moved == .loginForAnotherBackend(user: "bob", origin: "http://127.0.0.1:1", backend: "http://127.0.0.1:2"))

        await settings.publish(.init(backend: Self.backend + "/v2"))
        #expect(keeper.activeLogin?.user == "bob", "the same origin: the login follows")
    }

    /// A password and an API key are not interchangeable: at the same origin, a login made
    /// for one API is not in force once `backend_api` names the other, and says why.
    @Test func aLoginIsInForceOnlyForItsOwnAPI() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let settings = SettingsStore(.init(backend: Self.backend))
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: settings)
        try await keeper.commit(Credentials(user: "bob", password: "bob", backend: nil))
        #expect(keeper.currentKey == AccountKey(user: "bob", backend: Self.backend))

        await settings.publish(.init(backend: Self.backend, backendAPI: .installations))
        #expect(keeper.activeLogin == nil && keeper.currentKey == nil)
        #expect(keeper.noAccountReason == .loginForAnotherAPI(user: "bob", api: .registrations, inForce: .installations))
        #expect(keeper.noAccountReason.description.contains("API key"))
        #expect(CredentialStore(directory: directory.path).load().0?.api == .registrations, "kept as it was made")

        await settings.publish(.init(backend: Self.backend))
        #expect(keeper.activeLogin?.user == "bob")
    }

    /// What the outbox sends without waiting: only a password already in memory, and only
    /// for the account it belongs to; a password source or an unread keyring is asked.
    @Test func credentialsAtHandAreOnlyThoseInMemoryForTheirOwnAccount() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let bob = AccountKey(user: "bob", backend: Self.backend)
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: SettingsStore(.init(backend: Self.backend)))
        #expect(keeper.readyAccount(for: bob) == nil)
        try await keeper.commit(Credentials(user: "bob", password: "bob", backend: nil))
        #expect(keeper.readyAccount(for: bob) == BackendAccount(baseURL: URL(string: Self.backend)!, user: "bob", password: "bob"))
        #expect(keeper.readyAccount(for: AccountKey(user: "alice", backend: Self.backend)) == nil)
        #expect(keeper.readyAccount(for: AccountKey(user: "bob", backend: "http://127.0.0.1:2")) == nil)

        let commanded = AccountKeeper(stateDirectory: directory.path,
                                      settings: SettingsStore(.init(backend: Self.backend, passwordSource: .command("echo secret"))))
        #expect(commanded.readyAccount(for: bob) == nil)
        #expect(try await commanded.backendAccount(for: bob).password == "secret")

        var inKeyring = Credentials(user: "bob", password: "", backend: nil)
        inKeyring.keyringItem = "rev-1"
        try CredentialStore(directory: directory.path).save(inKeyring)
        let unread = AccountKeeper(stateDirectory: directory.path, settings: SettingsStore(.init(backend: Self.backend)))
        #expect(unread.loggedIn?.keyringItem == "rev-1")
        #expect(unread.readyAccount(for: bob) == nil)
    }

    /// A keeper whose password source is `command`, with alice logged in (no password of
    /// her own), and her account's key.
    static func aliceWithPasswordCommand(_ command: String, in directory: ScratchDirectory) async throws -> (AccountKeeper, AccountKey) {
        let keeper = AccountKeeper(stateDirectory: directory.path,
                                   settings: SettingsStore(.init(backend: backend, passwordSource: .command(command))))
        try await keeper.commit(Credentials(user: "alice", password: "", backend: nil))
        return (keeper, AccountKey(user: "alice", backend: backend))
    }

    @Test func concurrentCallersShareOneRunOfThePasswordCommand() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let runs = directory.file("runs")
        let (keeper, key) = try await Self.aliceWithPasswordCommand("echo run >> \(runs); sleep 0.2; echo secret", in: directory)
        let passwords = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<5 { group.addTask { try await keeper.backendAccount(for: key).password } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(passwords == Array(repeating: "secret", count: 5))
        #expect(try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n").count == 1)
    }

    @Test func aFailingPasswordCommandIsReportedUntilItWorks() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let flag = directory.file("flag")
        let (keeper, key) = try await Self.aliceWithPasswordCommand("if [ -e \(flag) ]; then echo secret; else touch \(flag); exit 5; fi", in: directory)
        let failed = await #expect(throws: CoreError.self) { try await keeper.backendAccount(for: key) }
        #expect(failed == .passwordUnavailable("the password command failed (exit status 5)"))
        #expect(keeper.passwordProblem == "the password command failed (exit status 5)")
        #expect(try await keeper.backendAccount(for: key).password == "secret")
        #expect(keeper.passwordProblem == nil)
    }

    /// `status` says what a registration waits for while the password command runs, read
    /// under the runs' lock: shown from its start, gone at its end.
    @Test func aPasswordCommandIsShownRunningFromItsStartToItsEnd() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let release = directory.file("release")
        let (keeper, key) = try await Self.aliceWithPasswordCommand("while [ ! -e \(release) ]; do sleep 0.05; done; echo secret", in: directory)
        #expect(keeper.passwordRunningSince == nil)
        async let fetched = keeper.backendAccount(for: key)
        #expect(await eventually { keeper.passwordRunningSince != nil })
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        #expect(try await fetched.password == "secret")
        #expect(keeper.passwordRunningSince == nil)
    }

    @Test func aCredentialsFileFromANewerNotifydIsRefusedNotMisread() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        #expect(FileManager.default.createFile(atPath: store.path, contents: Data(#"{"version": 9, "user": "alice", "password": "x", "revision": "r", "saved_at": "2027-01-01T00:00:00Z"}"#.utf8)))
        let (loaded, warning) = store.load()
        #expect(loaded == nil)
        #expect(warning?.contains("newer notifyd (format 9") == true)
        #expect(FileManager.default.fileExists(atPath: store.path), "left for the notifyd that wrote it")
    }
}
