#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyProtocol

/// The password in the session's Secret Service (GNOME Keyring, KWallet), through
/// libsecret's `secret-tool` (on macOS, in the login keychain: `LoginKeychain`), as git's and docker's credential helpers keep theirs: one item
/// per login, found by the attributes service=notifyd, user and login (an id of notifyd's,
/// so that a reload that changes `backend` does not lose it); its label names the backend.
/// The password goes to `secret-tool store` on standard input, never in its arguments or
/// environment.
///
/// notifyd never makes the keyring ask to be unlocked: a background agent's prompt would
/// come out of nowhere, and again at every retry. A lookup first asks `secret-tool search`,
/// which never prompts, whether the item is there and unlocked; a locked keyring is then a
/// state notifyd reports and waits out, and the user unlocks it as they would anyway
/// (logging in to the desktop does; so does Seahorse).
public struct SecretServiceKeyring: Sendable {
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// No Secret Service answers in this session (no D-Bus session, nothing providing
        /// org.freedesktop.secrets, or no secret-tool); the reason.
        case unavailable(String)
        /// One answered, but has no login collection to store in: a keyring never set up,
        /// as on a server or under a user manager without a desktop login. Told apart from
        /// `unavailable` because the fix differs: create the collection. What secret-tool said.
        case noLoginCollection(String)
        case locked
        /// No item for the account.
        case missing
        /// secret-tool failed otherwise; what it said.
        case failed(String)

        public var description: String {
            switch self {
            case .unavailable(let reason): "no Secret Service answers in this session (\(reason))"
            case .noLoginCollection(let said): "the Secret Service answered, but it has no login keyring (collection \"login\") to keep it in (\(said))"
            case .locked: "the keyring is locked"
            case .missing: "the keyring holds no password for this login"
            case .failed(let said): "the keyring failed: \(said)"
            }
        }
    }

    /// `secret-tool`, or a path to one.
    public var tool: String
    /// How long one secret-tool may take: a Secret Service that hangs makes it wait 25 s
    /// (D-Bus's own timeout) and more.
    public var timeout: Double

    public init(tool: String = "secret-tool", timeout: Double = 10) {
        self.tool = tool
        self.timeout = timeout
    }

    public struct Item: Sendable, Equatable {
        public var user: String
        public var id: String

        public init(user: String, id: String) {
            self.user = user
            self.id = id
        }

        var attributes: [String] { ["service", "notifyd", "user", user, "login", id] }
    }

    public func store(_ password: String, in item: Item, backend: String) async -> Result<Void, Failure> {
        #if canImport(Security)
        // Settings made in code (tests) name no client: the keychain is then left alone too.
        guard !tool.isEmpty else { return .failure(.unavailable("no keychain client is configured")) }
        return LoginKeychain.store(password, in: item, label: "notifyd: \(item.user) at \(backend)")
        #else
        let arguments = ["store", "--label=notifyd: \(item.user) at \(backend)"] + item.attributes
        switch await run(arguments, input: Data(password.utf8), withStandardError: true, hiding: password) {
        case .failure(let failure): return .failure(failure)
        case .success(let ran): return ran.status == 0 ? .success(()) : .failure(Self.classify(ran.output, hiding: password))
        }
        #endif
    }

    public func lookup(_ item: Item) async -> Result<String, Failure> {
        #if canImport(Security)
        // Settings made in code (tests) name no client: the keychain is then left alone too.
        guard !tool.isEmpty else { return .failure(.unavailable("no keychain client is configured")) }
        return LoginKeychain.lookup(item)
        #else
        let attributes = item.attributes
        switch await state(attributes) {
        case .failure(let failure): return .failure(failure)
        case .success:
            switch await run(["lookup"] + attributes, withStandardError: false) {
            case .failure(let failure): return .failure(failure)
            case .success(let ran) where ran.status == 0: return .success(String(decoding: ran.output, as: UTF8.self))
            case .success:
                // Locked or removed between the two calls: say which.
                if case .failure(let failure) = await state(attributes) { return .failure(failure) }
                return .failure(.failed("secret-tool lookup found nothing where secret-tool search found the item"))
            }
        }
        #endif
    }

    /// Removes the item; one that is not there is removed already.
    public func clear(_ item: Item) async -> Result<Void, Failure> {
        #if canImport(Security)
        // Settings made in code (tests) name no client: the keychain is then left alone too.
        guard !tool.isEmpty else { return .failure(.unavailable("no keychain client is configured")) }
        return LoginKeychain.clear(item)
        #else
        let attributes = item.attributes
        _ = await run(["clear"] + attributes, withStandardError: true)
        switch await state(attributes) {
        case .failure(.missing): return .success(())
        case .failure(let failure): return .failure(failure)
        case .success: return .failure(.failed("the item is still there after `secret-tool clear`"))
        }
        #endif
    }

    /// The command that removes the item by hand, for a message.
    public static func clearCommand(_ item: Item) -> String {
        "secret-tool clear " + item.attributes.map(shellQuoted).joined(separator: " ")
    }

    /// Whether the item is there and unlocked, asked without a prompt: `search` lists a
    /// locked item without its secret ("Cannot get secret of a locked object").
    private func state(_ attributes: [String]) async -> Result<Void, Failure> {
        switch await run(["search", "--all"] + attributes, withStandardError: true) {
        case .failure(let failure): return .failure(failure)
        case .success(let ran):
            let text = String(decoding: ran.output, as: UTF8.self)
            if text.contains("Cannot get secret of a locked object") { return .failure(.locked) }
            let lines = text.split(separator: "\n")
            if lines.contains(where: { $0.hasPrefix("secret = ") }) { return .success(()) }
            if lines.contains(where: { $0.hasPrefix("label = ") }) { return .failure(.locked) }
            return .failure(text.isEmpty ? .missing : Self.classify(ran.output, hiding: nil))
        }
    }

    /// Runs secret-tool; its output when it exits 0 or 1 (1 is also "not found", and what
    /// it says on standard error tells the rest apart). What a failure quotes of it never
    /// holds a secret: not `lookup`'s output, which is one, nor `hiding`, the one given to it.
    private func run(_ arguments: [String], input: Data? = nil, withStandardError: Bool,
                     hiding secret: String? = nil) async -> Result<(status: Int32, output: Data), Failure> {
        guard !tool.isEmpty else { return .failure(.unavailable("no Secret Service client is configured")) }
        // The Secret Service is a service of the session bus: without one there is none
        // to ask (and secret-tool would try an X11 autolaunch, leaving files in ~/.cache).
        guard Self.sessionBus() else { return .failure(.unavailable("no D-Bus session: DBUS_SESSION_BUS_ADDRESS is not set")) }
        // LC_ALL=C: secret-tool's messages are translated, and matched here.
        guard let finished = await ChildProcess.run([tool] + arguments, input: input, withStandardError: withStandardError,
                                                    environment: ["LC_ALL=C"], timeout: timeout) else {
            return .failure(notInstalled)
        }
        switch finished.ending {
        case .exited(let status) where status <= 1: return .success((status, finished.output))
        // A C library whose posix_spawn reports a missing program only as the child's 127.
        case .exited(127): return .failure(notInstalled)
        case .exited(let status):
            let said = withStandardError ? ": " + Self.firstLine(finished.output, hiding: secret) : ""
            return .failure(.failed("\(tool) exited with status \(status)\(said)"))
        case .killedAtDeadline: return .failure(.unavailable("the Secret Service did not answer within \(Int(timeout)) s"))
        case .killedForOutput: return .failure(.failed("\(tool) printed more than \(ChildProcess.outputLimit / 1024) KiB"))
        case .killedWhenCancelled: return .failure(.failed("\(tool) was stopped: notifyd is stopping"))
        }
    }

    private static func sessionBus() -> Bool {
        guard let address = getenv("DBUS_SESSION_BUS_ADDRESS") else { return false }
        return address.pointee != 0
    }

    private var notInstalled: Failure { .unavailable("\(tool) is not installed (Debian package libsecret-tools)") }

    /// What secret-tool said on standard error, as a failure.
    static func classify(_ output: Data, hiding secret: String?) -> Failure {
        let said = firstLine(output, hiding: secret)
        if said.contains("locked collection") { return .locked }
        // secret-tool stores into the "login" alias, and a service without that collection
        // answers for the object path it names, in quotes that LC_ALL=C turns into '?':
        // said again here without them.
        if said.contains("Object does not exist at path") && said.contains("/collection/login") {
            return .noLoginCollection("no collection at /org/freedesktop/secrets/collection/login")
        }
        let absent = ["was not provided by any .service files", "Cannot autolaunch D-Bus", "Could not connect",
                      "Object does not exist at path", "dbus-launch", "No such interface"]
        if absent.contains(where: { said.contains($0) }) { return .unavailable(said) }
        return .failed(said)
    }

    /// The first line of what it said that is not a secret (`search` prints each as
    /// `secret = …`), with every secret masked, `secret` and those it printed: a client
    /// that repeats one, or a wrapper around one, must not put the password into `status`
    /// or the log.
    static func firstLine(_ output: Data, hiding secret: String?) -> String {
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        let printed = lines.compactMap(printedSecret)
        let secrets = (printed.map(String.init) + [secret].compactMap { $0 }).filter { !$0.isEmpty }
        let said = Redaction.hiding(secrets, in: lines.first { printedSecret($0) == nil }.map(String.init) ?? "", as: "(the password)")
        return PrintableText.line(String(said.prefix(512)))
    }

    /// The secret of a `secret = …` line of `search`, or nil for another line.
    private static func printedSecret(_ line: Substring) -> Substring? {
        guard line.hasPrefix("secret") else { return nil }
        let rest = line.dropFirst("secret".count).drop { $0 == " " }
        guard rest.first == "=" else { return nil }
        return rest.dropFirst().drop { $0 == " " }
    }

    private static func shellQuoted(_ word: String) -> String {
        word.allSatisfy({ $0.isLetter || $0.isNumber || "-_.:/@".contains($0) }) ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
