import Foundation
import Synchronization

/// Where the password comes from. Stored: the 0600 credentials file written at login.
/// Command: the output of a configured command (like msmtp's `passwordeval`), so the
/// password can live in `pass`, a keyring or a vault. Systemd credential: the file
/// systemd puts in `$CREDENTIALS_DIRECTORY` (LoadCredential=, LoadCredentialEncrypted=).
public enum PasswordSource: Sendable, Equatable {
    case stored
    case command(String)
    case systemdCredential(path: String)

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
        }
    }
}

/// Hands out the password for backend calls. An external password is fetched once and
/// kept in memory (a command like `pass show` may ask for a passphrase), and fetched again
/// after the backend refused it.
public final class PasswordProvider: Sendable {
    public let source: PasswordSource
    private let cached = Mutex<String?>(nil)
    private let timeout: Double

    public init(source: PasswordSource, timeout: Double = 60) {
        self.source = source
        self.timeout = timeout
    }

    public var isExternal: Bool { source != .stored }

    public func password(stored: String) async throws(CoreError) -> String {
        switch source {
        case .stored:
            return stored
        case .systemdCredential(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .passwordUnavailable("cannot read the systemd credential \(path)")
            }
            return Self.firstLine(data)
        case .command(let command):
            if let password = cached.withLock({ $0 }) { return password }
            let password = try await run(command)
            cached.withLock { $0 = password }
            return password
        }
    }

    /// The backend refused the password: fetch it anew next time.
    public func forget() {
        cached.withLock { $0 = nil }
    }

    private func run(_ command: String) async throws(CoreError) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let timeout = self.timeout
        let status: Int32? = await withCheckedContinuation { continuation in
            let once = Mutex(false)
            let finish: @Sendable (Int32?) -> Void = { status in
                let first = once.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: status) }
            }
            process.terminationHandler = { finished in finish(finished.terminationStatus) }
            do {
                try process.run()
            } catch {
                finish(nil)
                return
            }
            Task {
                try? await Task.sleep(for: .seconds(timeout))
                if process.isRunning { process.terminate() }
                finish(-1)
            }
        }
        guard let status else { throw .passwordUnavailable("cannot run the password command") }
        guard status == 0 else {
            throw .passwordUnavailable(status == -1 ? "the password command took longer than \(Int(timeout)) s" : "the password command failed (exit status \(status))")
        }
        let password = Self.firstLine(output.fileHandleForReading.readDataToEndOfFile())
        guard !password.isEmpty else { throw .passwordUnavailable("the password command printed nothing") }
        return password
    }

    private static func firstLine(_ data: Data) -> String {
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }
}
