#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Where the password comes from. Stored: the 0600 credentials file written at login.
/// Command: the output of a configured command (like msmtp's `passwordeval`), so the
/// password can live in `pass`, a keyring or a vault. Systemd credential: the file
/// systemd puts in `$CREDENTIALS_DIRECTORY` (LoadCredential=, LoadCredentialEncrypted=).
public enum PasswordSource: Sendable, Equatable {
    case stored
    case command(String)
    case systemdCredential(path: String)
    /// A login's password the Secret Service keeps (`password_store`); never configured.
    case keyring(SecretServiceKeyring.Item)

    public static let credentialName = "notifyd-password"

    /// A systemd credential wins over a command, which wins over the stored password.
    public static func detect(command: String?, environment: [String: String]) -> PasswordSource {
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let path = directory + "/" + credentialName
            if FileManager.default.fileExists(atPath: path) { return .systemdCredential(path: path) }
        }
        if let command { return .command(command) }
        return .stored
    }

    /// As shown in `status`: "file", "command" or "systemd-credential".
    public var name: String {
        switch self {
        case .stored: "file"
        case .command: "command"
        case .systemdCredential: "systemd-credential"
        case .keyring: "keyring"
        }
    }
}

/// Hands out the password for backend calls. An external password is fetched once and
/// kept in memory (a command like `pass show` may ask for a passphrase), and fetched again
/// after the backend refused it, or from a new source once a reload changed it.
public final class PasswordProvider: Sendable {
    private let settings: SettingsStore
    /// What the command gave, with the source it came from.
    private let cached = Mutex<(source: PasswordSource, password: String)?>(nil)

    public init(settings: SettingsStore) {
        self.settings = settings
    }

    /// `password_command` (or the systemd credential) in effect now.
    public var source: PasswordSource { settings[\.passwordSource] }

    public var isExternal: Bool { source != .stored }

    public func password(stored: String) async throws(CoreError) -> String {
        let source = self.source
        switch source {
        case .stored, .keyring:
            return stored
        case .systemdCredential(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .passwordUnavailable("cannot read the systemd credential \(path)")
            }
            return try PasswordText.line(data, from: "the systemd credential \(path)")
        case .command(let command):
            if let password = cached.withLock({ $0?.source == source ? $0?.password : nil }) { return password }
            let password = try await run(command)
            cached.withLock { $0 = (source, password) }
            return password
        }
    }

    /// The backend refused the password: fetch it anew next time.
    public func forget() {
        cached.withLock { $0 = nil }
    }

    /// Runs `command` within `password_timeout`; cancelling the task that waits for it
    /// (a reload that changed the command, a stop) kills it with whatever it started.
    private func run(_ command: String) async throws(CoreError) -> String {
        let timeout = settings[\.passwordTimeout]
        guard let finished = await ChildProcess.run(shell: command, timeout: timeout) else {
            throw .passwordUnavailable("cannot run the password command")
        }
        switch finished.ending {
        case .killedAtDeadline:
            throw .passwordUnavailable("the password command did not finish within password_timeout (\(CFormat.string("%g", timeout)) s) and was stopped")
        case .killedForOutput:
            throw .passwordUnavailable("the password command printed more than \(ChildProcess.outputLimit / 1024) KiB and was stopped; a password is one line")
        case .killedWhenCancelled:
            throw .passwordUnavailable("the password command was stopped: the configuration changed, or notifyd is stopping")
        case .exited(let status) where status != 0:
            throw .passwordUnavailable("the password command failed (exit status \(status))")
        case .exited:
            return try PasswordText.line(finished.output, from: "the password command")
        }
    }
}
