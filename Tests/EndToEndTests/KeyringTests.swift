import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The password in the session's keyring, through the built notifyd and notifyctl and a
/// stand-in `secret-tool` that answers as the real one does (the real one, against GNOME
/// Keyring in a D-Bus session, is contrib/tests/user-manager's): where `login` puts the
/// password, that no file of notifyd's holds it, a restart that reads it back, a locked
/// keyring waited out without a prompt, `logout`, and a session with no Secret Service.
@Suite struct KeyringTests {
    static let password = "keyring-Secret-7f3a"

    /// A directory with the stand-in on PATH; items are files in it, named by attributes.
    /// `locked`, `absent` (no Secret Service), `nologin` (one without a login collection)
    /// and `held` (a lookup answers only once it is gone, as a slow D-Bus session would)
    /// are flag files; `calls` logs every call.
    struct FakeKeyring {
        let directory: ScratchDirectory
        var environment: [String: String] {
            ["PATH": directory.path + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
             "FAKE_KEYRING": directory.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"]
        }

        init() throws {
            directory = try ScratchDirectory()
            try FileManager.default.createDirectory(atPath: directory.path + "/bin", withIntermediateDirectories: true)
            let script = #"""
                #!/bin/sh
                dir=$FAKE_KEYRING
                echo "$*" >> "$dir/calls"
                env >> "$dir/environments"
                if [ -e "$dir/absent" ]; then
                    echo "secret-tool: The name org.freedesktop.secrets was not provided by any .service files" >&2; exit 1
                fi
                command=$1; shift
                case $1 in --label=*|--all) shift ;; esac
                item="$dir/item-$(printf '%s_' "$@" | tr -c 'A-Za-z0-9_' '_')"
                # A client that repeats what it was given, on failure.
                if [ -e "$dir/leaky" ]; then
                    case $command in
                    store) echo "secret-tool: cannot store $(cat)" >&2; exit 1 ;;
                    lookup) cat "$item"; exit 3 ;;
                    search) echo "secret = $(cat "$item")"; echo "secret-tool: cannot search for $(cat "$item")" >&2; exit 4 ;;
                    esac
                fi
                case $command in
                store)
                    while [ -e "$dir/held-store" ]; do sleep 0.02; done
                    if [ -e "$dir/locked" ]; then echo "secret-tool: Cannot create an item in a locked collection" >&2; exit 1; fi
                    # GNOME Keyring running, but no login keyring ever made.
                    if [ -e "$dir/nologin" ]; then echo "secret-tool: Object does not exist at path “/org/freedesktop/secrets/collection/login”" >&2; exit 1; fi
                    cat > "$item" ;;
                lookup)
                    while [ -e "$dir/held" ]; do sleep 0.02; done
                    # The real one would ask to unlock here; notifyd must never get this far.
                    if [ -e "$dir/locked" ] || [ ! -f "$item" ]; then exit 1; fi
                    cat "$item" ;;
                search)
                    [ -f "$item" ] || exit 0
                    echo "[/org/freedesktop/secrets/collection/login/1]"
                    echo "label = notifyd"
                    if [ -e "$dir/locked" ]; then echo "secret-tool: Cannot get secret of a locked object" >&2
                    else echo "secret = $(cat "$item")"; fi ;;
                clear)
                    if [ -e "$dir/locked" ] || [ ! -f "$item" ]; then exit 1; fi
                    rm "$item" ;;
                esac
                """#
            try writeFileClosingOnExec(directory.path + "/bin/secret-tool", script, mode: 0o755)
        }

        func set(_ flag: String, _ on: Bool) {
            if on { _ = FileManager.default.createFile(atPath: directory.path + "/" + flag, contents: nil) } else { try? FileManager.default.removeItem(atPath: directory.path + "/" + flag) }
        }

        var items: [String] { ((try? directory.entries()) ?? []).filter { $0.hasPrefix("item-") } }
        var calls: [String] { ((try? String(contentsOfFile: directory.path + "/calls", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
    }

    static func backend() throws -> DevBackendServer {
        let server = DevBackendServer(options: .init(quiet: true, accounts: ["alice": password]))
        try server.start()
        return server
    }

    /// Every file under `directory`, read whole: none may hold the password.
    static func filesHolding(_ secret: String, under directory: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var found: [String] = []
        while let name = enumerator?.nextObject() as? String {
            if let data = FileManager.default.contents(atPath: directory + "/" + name), String(decoding: data, as: UTF8.self).contains(secret) {
                found.append(name)
            }
        }
        return found
    }

    @Test func theKeyringKeepsThePasswordAcrossARestartAndALockWithoutAPrompt() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        let backend = try Self.backend()
        defer { backend.stop() }
        let arguments = ["--retry-min", "1s", "--retry-max", "2s"]
        var daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: arguments, environment: keyring.environment)
        let state = daemon.stateDirectory

        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data((Self.password + "\n").utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(login.output.contains("The password is kept in the keyring"), "\(login.output)")
        #expect(keyring.items.count == 1)
        let credentials = try String(contentsOfFile: state + "/credentials.json", encoding: .utf8)
        #expect(credentials.contains("\"keyring_item\"") && !credentials.contains("\"password\""), "\(credentials)")
        #expect(Self.filesHolding(Self.password, under: state).isEmpty)
        // It went on standard input: never in secret-tool's arguments or environment (`ps`).
        #expect(Self.filesHolding(Self.password, under: keyring.directory.path) == [keyring.items[0]])
        #expect(try await daemon.notifyctl(["status"]).output.contains("password:     in the keyring"))

        // A new notifyd reads the password back from the keyring.
        _ = await daemon.stop()
        daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: arguments, stateDirectory: state,
                                           environment: keyring.environment)
        let sent = try await daemon.notifyctl(["send", "--to", "alice", "--wait", "read back from the keyring"])
        #expect(sent.status == 0, "\(sent.output)\(sent.error)")

        // Locked: what needs the password waits, and status says why; no lookup, which
        // would prompt, is made until it is unlocked.
        _ = await daemon.stop()
        keyring.set("locked", true)
        daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: arguments, stateDirectory: state,
                                           environment: keyring.environment)
        let lookupsBefore = keyring.calls.filter { $0.hasPrefix("lookup") }.count
        let queued = try await daemon.notifyctl(["send", "--to", "alice", "while locked"])
        #expect(queued.status == 0 || queued.status == 4, "\(queued.output)\(queued.error)\n\(keyring.calls)\n\(daemon.child.standardError)")
        let pushes = backend.pushes().count
        let said = await eventually { (try? await daemon.notifyctl(["status"]).output.contains("is locked")) == true }
        #expect(said, "status names the locked keyring")
        #expect(keyring.calls.filter { $0.hasPrefix("lookup") }.count == lookupsBefore, "no lookup (a prompt) while locked")
        #expect(backend.pushes().count == pushes)
        keyring.set("locked", false)
        let delivered = await eventually(20) { backend.pushes().count == pushes + 1 }
        #expect(delivered, "once unlocked, the message goes out by itself")

        // Logout removes the item.
        let logout = try await daemon.notifyctl(["logout", "--force"])
        #expect(logout.status == 0, "\(logout.output)\(logout.error)")
        #expect(keyring.items.isEmpty)
        await daemon.cleanUp()
    }

    /// A keyring client that repeats the secret it was given or found, when it fails, does
    /// not put it into a reply, `status` or the log: only what it said besides is quoted.
    @Test func whatAFailingClientRepeatsOfThePasswordIsNeverShown() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        let backend = try Self.backend()
        defer { backend.stop() }
        var daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: keyring.environment)
        let state = daemon.stateDirectory
        try await daemon.logIn("alice", password: Self.password)
        #expect(keyring.items.count == 1)

        // Read back by a client that fails after printing it.
        _ = await daemon.stop()
        keyring.set("leaky", true)
        daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: state, environment: keyring.environment)
        _ = try await daemon.notifyctl(["send", "--to", "alice", "needs the password"])
        var status = ""
        #expect(await eventually {
            status = (try? await daemon.notifyctl(["status"]).output) ?? ""
            return status.contains("from the keyring")
        }, "\(status)")
        #expect(!status.contains(Self.password), "\(status)")

        // Stored by a client that fails repeating its input.
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data((Self.password + "\n").utf8))
        #expect(login.status != 0 && login.error.contains("cannot store (the password)"), "\(login.output)\(login.error)")
        #expect(!(login.output + login.error).contains(Self.password))
        status = try await daemon.notifyctl(["status"]).output
        #expect(!status.contains(Self.password), "\(status)")
        await daemon.cleanUp()
        #expect(!daemon.child.standardError.contains(Self.password), "the log")
    }

    /// A keyring lookup that hangs (a Secret Service that does not answer) does not hold up
    /// the stop: it is stopped first, not waited out.
    @Test func aHungLookupDoesNotHoldUpTheStop() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        let backend = try Self.backend()
        defer { backend.stop() }
        let environment = keyring.environment.merging(["NOTIFYD_PASSWORD_TIMEOUT": "1h"]) { $1 }
        var daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: environment)
        let state = daemon.stateDirectory
        try await daemon.logIn("alice", password: Self.password)
        _ = await daemon.stop()
        keyring.set("held", true)
        defer { keyring.set("held", false) }
        daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: state, environment: environment)
        _ = try await daemon.notifyctl(["send", "--to", "bob", "needs the keyring"])
        #expect(await eventually { keyring.calls.contains { $0.hasPrefix("lookup") } }, "the lookup hangs")
        #expect(await daemon.stop() == 0, "\(daemon.child.standardError)")
        await daemon.cleanUp()
    }

    /// A keyring that hangs as a login stores the password in it does not hold up the stop
    /// either: the store is stopped, and the login fails without saving anything.
    @Test func aHungStoreDoesNotHoldUpTheStop() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        let backend = try Self.backend()
        defer { backend.stop() }
        keyring.set("held-store", true)
        defer { keyring.set("held-store", false) }
        let environment = keyring.environment.merging(["NOTIFYD_PASSWORD_TIMEOUT": "1h"]) { $1 }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: environment)
        let login = try await SpawnedProcess.start(BuiltProducts.path("notifyctl"), ["--socket", daemon.socket, "login", "--password-stdin", "alice"],
                                                   stdin: Data("\(Self.password)\n".utf8))
        #expect(await eventually { keyring.calls.contains { $0.hasPrefix("store") } }, "the store hangs")
        #expect(await daemon.stop() == 0, "\(daemon.child.standardError)")
        #expect(await login.wait() != 0, "not logged in: \(login.standardOutput)\(login.standardError)")
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/credentials.json"))
        await daemon.cleanUp()
    }

    /// A recipient's message waiting for the keyring's answer is not overtaken by the next
    /// one to the same recipient, even once a new login put the password in memory, where
    /// the next one could go at once.
    @Test func aMessageWaitingForTheKeyringIsNotOvertakenByTheNextOne() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        let backend = try Self.backend()
        defer { backend.stop() }
        var daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: keyring.environment)
        #expect(try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8)).status == 0)
        // A new notifyd has the password in the keyring only, until it looks it up.
        _ = await daemon.stop()
        daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--retry-min", "1s", "--retry-max", "2s"],
                                           stateDirectory: daemon.stateDirectory, environment: keyring.environment)
        keyring.set("held", true)
        // A send's reply waits for its first attempt, which waits for the keyring here.
        let current = daemon
        let first = Task { try await current.notifyctl(["send", "--to", "bob", "first"]) }
        let asked = await eventually { keyring.calls.contains { $0.hasPrefix("lookup") } }
        #expect(asked, "the first message waits for the keyring")
        let again = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8))
        #expect(again.status == 0, "\(again.output)\(again.error)")
        let second = Task { try await current.notifyctl(["send", "--to", "bob", "second"]) }
        let queued = await eventually {
            let listed = try? await current.notifyctl(["--json", "outbox"]).output
            return listed?.contains("\"state\":\"queued\"") == true && listed?.contains("0000000002") == true || !backend.pushes().isEmpty
        }
        #expect(queued, "both are accepted")
        keyring.set("held", false)
        // The first one's lookup finds the item the new login replaced gone: it is tried
        // again, with the new login's password, and the second one still waits behind it.
        for send in [try await first.value, try await second.value] { #expect([0, 4].contains(send.status), "\(send.output)\(send.error)") }
        #expect(await eventually(20) { backend.pushes().count == 2 }, "\(daemon.child.standardError)")
        #expect(backend.pushes().map(\.displayedText) == ["From alice: first", "From alice: second"])
        await daemon.cleanUp()
    }

    /// A Secret Service answered, so "no Secret Service answers" was wrong: the login
    /// collection is missing, and login says so, and how to make it or keep the file.
    @Test func withoutALoginCollectionLoginSaysSoAndHowToCreateItOrChooseTheFile() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        keyring.set("nologin", true)
        let backend = try Self.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: keyring.environment)
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(login.output.contains("The password is kept in \(daemon.stateDirectory)/credentials.json (mode 0600): the Secret Service answered, but it has no login keyring"),
                "\(login.output)")
        #expect(!login.output.contains("no Secret Service answers"), "\(login.output)")
        #expect(login.output.contains("gnome-keyring-daemon --unlock") && login.output.contains("set password_store = file"), "\(login.output)")
        await daemon.cleanUp()

        let strict = try await DaemonUnderTest(backend: backend.baseURL.absoluteString,
                                               environment: keyring.environment.merging(["NOTIFYD_PASSWORD_STORE": "keyring"]) { $1 })
        let refused = try await strict.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8))
        #expect(refused.status != 0)
        #expect(refused.error.contains("has no login keyring") && refused.error.contains("create it") && refused.error.contains("password_store = file"), "\(refused.error)")
        await strict.cleanUp()
    }

    @Test func withoutASecretServiceTheFileKeepsItAndLoginSaysWhere() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        keyring.set("absent", true)
        let backend = try Self.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: keyring.environment)
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(login.output.contains("The password is kept in \(daemon.stateDirectory)/credentials.json (mode 0600): no Secret Service answers"),
                "\(login.output)")
        let credentials = try String(contentsOfFile: daemon.stateDirectory + "/credentials.json", encoding: .utf8)
        #expect(credentials.contains(Self.password) && !credentials.contains("keyring_item"))
        await daemon.cleanUp()

        // password_store = keyring insists: no login without one, and the reason.
        let strict = try await DaemonUnderTest(backend: backend.baseURL.absoluteString,
                                               environment: keyring.environment.merging(["NOTIFYD_PASSWORD_STORE": "keyring"]) { $1 })
        let refused = try await strict.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8))
        #expect(refused.status != 0)
        #expect(refused.error.contains("cannot keep the password in the keyring") && refused.error.contains("password_store = file"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: strict.stateDirectory + "/credentials.json"))
        await strict.cleanUp()
    }

    /// A backend switch retires the registration at the old backend; its deletion there
    /// reads the password from the keyring item (never from a file), and the item stays,
    /// the login in force using it.
    @Test func aRetiredRegistrationIsDeletedWithThePasswordFromTheKeyring() async throws {
        let keyring = try FakeKeyring()
        defer { keyring.directory.remove() }
        let old = try Self.backend(), new = try Self.backend()
        defer { old.stop(); new.stop() }
        let config = keyring.directory.file("config")
        try Data("backend = \(old.baseURL.absoluteString)\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], environment: keyring.environment)
        #expect(try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8)).status == 0)
        #expect(try await daemon.notifyctl(["set-token", "3f2a1b"]).status == 0)
        let id = try #require(old.registrations().first?.id)

        // The deletion waits long at the backend, so that the retired entry is on disk to be
        // read however slowly the machine runs the reload and this check.
        try old.addFault(DevBackend.FaultRule(route: .delete, delay: 10, count: 1))
        try Data("backend = \(new.baseURL.absoluteString)\n".utf8).write(to: URL(fileURLWithPath: config))
        #expect(try await daemon.notifyctl(["reload"]).status == 0)
        let retiredFile = daemon.stateDirectory + "/retired-registrations.json"
        #expect(await eventually { FileManager.default.fileExists(atPath: retiredFile) }, "the old registration waits for its deletion")
        #expect(Self.filesHolding(Self.password, under: daemon.stateDirectory).isEmpty, "\(keyring.calls)\n\(daemon.child.standardError)")
        let deleted = await eventually(30) { old.requests().contains { $0.method == "DELETE" && $0.path == "/api/register/" + id && $0.status == 200 } }
        #expect(deleted, "the old registration is deleted, with the password from the keyring")
        let ended = await eventually { (try? await daemon.notifyctl(["--json", "status"]).output.contains("retired_registrations")) == false }
        #expect(ended, "and its retirement has ended")
        #expect(Self.filesHolding(Self.password, under: daemon.stateDirectory).isEmpty)
        #expect(keyring.items.count == 1, "the login kept for the old backend keeps its item")
        // A login at the new backend, whose item replaces the old one's.
        #expect(try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data(Self.password.utf8)).status == 0)
        #expect(keyring.items.count == 1, "\(keyring.items)")
        #expect(try await daemon.notifyctl(["send", "--to", "alice", "--wait", "at the new backend"]).status == 0)
        await daemon.cleanUp()
    }
}
