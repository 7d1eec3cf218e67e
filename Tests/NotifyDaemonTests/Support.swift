import NotifyCoding
import DevBackend
import Foundation
import NotifyClient
import NotifyCore
@testable import NotifyDaemon
import NotifyProtocol
import NotifySocket
import NotifyTestSupport
import Synchronization
import Testing

/// notifyd in-process on a temporary socket, against an in-process dev backend on an
/// ephemeral loopback port. Both are stopped by `stop()`, which `.stopsFixtures` awaits
/// when the test ends.
final class DaemonFixture: Sendable {
    let directory: String
    let socketPath: String
    let stateDirectory: String
    let backend: DevBackendServer
    let daemon: Daemon
    let logLines = LogCapture()
    /// Every password the daemon was given: none may appear in a log line or a reply.
    private let passwords = Mutex<Set<String>>([])

    private let ownsBackend: Bool

    /// `sharing` reuses another fixture's backend (to restart a daemon against the same one).
    /// `settings` are used as given, but for the backend, which is the fixture's. With
    /// `config`, the settings come from a config file instead, as `main` reads them, and
    /// `reload(config:)` can change them; the file names the fixture's backend first.
    init(settings: RuntimeSettings = .fast, backendOptions: DevBackend.Options = .init(quiet: true), stateDirectory: String? = nil,
         startBackend: Bool = true, sharing: DevBackendServer? = nil, config: String? = nil, checkingStatusParts: Bool = true) async throws {
        let started = try StartedFixtures.forNewFixture()
        directory = "/tmp/nd-test-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/notifyd.sock"
        self.stateDirectory = stateDirectory ?? directory + "/state"
        backend = sharing ?? DevBackendServer(options: backendOptions)
        ownsBackend = sharing == nil
        if startBackend && sharing == nil { try backend.start() }
        let lines = logLines
        let logger = Logger(level: .debug) { level, message in lines.append("\(level.name): \(message)") }
        var settings = settings
        settings.backend = startBackend || sharing != nil ? backend.baseURL.absoluteString : "http://127.0.0.1:9"
        var configuration = DaemonConfiguration(socket: SocketLocation(path: socketPath, source: .flag), stateDirectory: self.stateDirectory,
                                                settings: settings)
        // Every status the tests ask for checks that no change forgot to publish its part
        // (StatusTests turn it off, to test the answer made on the socket loop itself).
        configuration.checksStatusParts = checkingStatusParts
        if let config {
            let path = directory + "/config"
            try Self.write(config, backend: settings.backend, to: path)
            let read: @Sendable () -> (ResolvedSettings, [SettingProblem]) = {
                ResolvedSettings.resolve(flags: [], configFlag: path, environment: [:])
            }
            let (resolved, problems) = read()
            guard problems.isEmpty else { throw ConfigProblems(problems: problems) }
            configuration.settings = resolved.runtime
            configuration.settingsSource = SettingsSource(current: resolved, read: read)
        }
        daemon = Daemon(configuration: configuration, logger: logger)
        started.add(self)
        try await daemon.start()
    }

    struct ConfigProblems: Error {
        var problems: [SettingProblem]
    }

    /// A config file naming `backend` first, unless `text` names one itself, and
    /// `log_level = debug` unless it names a level: every line the daemon can log is
    /// looked at for passwords.
    static func write(_ text: String, backend: String?, to path: String) throws {
        let lines = text.split(separator: "\n")
        let names = lines.contains { $0.hasPrefix("backend") } ? "" : backend.map { "backend = \($0)\n" } ?? ""
        let level = lines.contains { $0.hasPrefix("log_level") } ? "" : "log_level = debug\n"
        try Data((names + level + text).utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Writes `config` (see `init`) and has the daemon read it again.
    func reload(config: String) async throws -> ReloadResult {
        try Self.write(config, backend: backend.baseURL.absoluteString, to: directory + "/config")
        return try await call(ReloadCommand())
    }

    func stop() async {
        await daemon.stop()
        expectNoPassword(in: log, where: "the log")
        #expect(!log.contains(StatusCheck.staleMessage), "a change to what status reports did not publish its part (StatusPart)")
        // Waiting for the backend's threads and removing files block: not on the pool.
        let (backend, ownsBackend, directory) = (backend, ownsBackend, directory)
        _ = try? await offThePool {
            if ownsBackend { backend.stop() }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// One command over a fresh connection, run off the concurrency pool. Its reply, or
    /// its error, must not show a password.
    /// `clientTimeout`: how long the client waits for the reply, as `notifyctl` does; past
    /// a command's own wait when that is longer.
    /// A command that waits for the backend (`WaitingCommand`) and names no wait of its own
    /// waits up to a minute, not notifyctl's 10 s: a test process sharing two cores with
    /// other suites, or traced, was seen to make no progress for 7 s and more.
    func call<Command: NotifyCommand>(_ command: Command, clientTimeout: Double = 30) async throws -> Command.Result {
        if let login = command as? LoginCommand, let password = login.password { remember(password: password) }
        let (command, clientTimeout) = Self.patient(command, clientTimeout)
        let path = socketPath
        do {
            let (result, raw) = try await onDedicatedThread {
                let client = try NotifyClient(socketPath: path, timeout: clientTimeout)
                return try client.call(command)
            }
            expectNoPassword(in: String(decoding: (try? WireCoding.line(raw)) ?? Data(), as: UTF8.self), where: "the reply to \(Command.name)")
            return result
        } catch let ClientError.daemon(error) {
            expectNoPassword(in: error.message, where: "the error of \(Command.name)")
            throw ClientError.daemon(error)
        }
    }

    private static func patient<Command: NotifyCommand>(_ command: Command, _ clientTimeout: Double) -> (Command, Double) {
        guard var waiting = command as? any WaitingCommand, waiting.wait != false, waiting.timeout == nil else { return (command, clientTimeout) }
        waiting.timeout = 60
        return (waiting as! Command, max(clientTimeout, 70))
    }

    /// A password the daemon learns other than through a login made with `call` (one
    /// that a password command prints), for the checks of every reply and of the log.
    func remember(password: String) {
        passwords.withLock { _ = $0.insert(password) }
    }

    /// Records an issue when `text` holds a password the daemon was given. A password that
    /// is also a user name (the tests' `alice`) cannot be told apart from the name, and is
    /// not looked for; nor is the password itself shown.
    private func expectNoPassword(in text: String, where place: String) {
        let shown = passwords.withLock { $0 }.filter { $0.count >= 8 && text.contains($0) }
        if !shown.isEmpty {
            Issue.record("a password (\(shown.count) of \(passwords.withLock { $0.count }) given to this notifyd) appears in \(place)")
        }
    }

    /// A command that must fail: its wire error.
    func callExpectingError<Command: NotifyCommand>(_ command: Command) async throws -> WireError {
        do {
            _ = try await call(command)
        } catch let ClientError.daemon(error) {
            return error
        }
        throw UnexpectedSuccess()
    }

    struct UnexpectedSuccess: Error {}

    /// Without `password`, one the dev backend accepts for `user` (it compares the text
    /// before the first ':' with the name) and that no log line or reply may show.
    func login(_ user: String = "alice", password: String? = nil) async throws -> RegistrationOutcome {
        try await call(LoginCommand(user: user, password: password ?? user + ":" + Self.secret))
    }

    /// The secret part of the fixtures' default passwords.
    static let secret = "fixture-secret-" + UUID().uuidString.prefix(8)

    func status() async throws -> StatusResult {
        try await call(StatusCommand())
    }

    var log: String { logLines.text }

    /// Requests the dev backend logged for a route.
    func count(_ route: DevBackend.Route) -> Int { backend.requestCount(route: route) }
}

extension RuntimeSettings {
    /// Settings that make tests quick: short backoffs and a short wait for more changes.
    static let fast = RuntimeSettings(policy: RegistrationPolicy(refreshInterval: 3600, backoff: Backoff(initial: 0.05, multiplier: 2, maximum: 0.2),
                                                                 debounce: 0.01, maximumDebounce: 0.2),
                                      requestTimeout: 5, logLevel: .debug)

    /// `fast`, changed by `change`.
    static func fast(_ change: (inout RuntimeSettings) -> Void) -> RuntimeSettings {
        var settings = fast
        change(&settings)
        return settings
    }
}

/// Every line the daemon logged, for tests that check what is (and is not) said.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

/// A raw connection for tests that speak the wire protocol byte by byte.
// Unchecked: a test hands it from one thread to the next, never using it from two at once.
final class RawConnection: @unchecked Sendable {
    let fd: Int32
    let reader: LineReader

    init(path: String) throws {
        fd = try UnixSocket.connect(path: path)
        // Only against a test that would hang: a reply on a machine shared with other
        // suites has been seen to take more than 10 s.
        UnixSocket.setReceiveTimeout(fd, seconds: 60)
        reader = LineReader(fd: fd, maximumLength: 1 << 20)
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        try UnixSocket.writeAll(fd, Array(text.utf8))
    }

    /// The next line as a JSON object, or nil at end of stream.
    func receive() -> JSONValue? {
        guard case .line(let bytes) = reader.next() else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }
}

func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await onDedicatedThread(body)
}
