import Foundation
import NotifySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program run by a test: started with posix_spawn, its output collected in files,
/// reaped with waitpid, and always stopped by the test.
///
/// Not Foundation's Process, which no test uses, for three faults of it on Linux:
/// - `run()` reads each `/proc/self/fd` entry with a 256-byte copy that can run off the
///   end of a mapped page and crash the whole test process, now and then, in a suite that
///   starts many programs (swiftlang/swift-corelibs-foundation#5472, fixed after this
///   toolchain);
/// - it notices a child's exit through a socket the child inherits, and a child that
///   closes or reuses that descriptor (systemd-socket-activate puts its listener on fd 3)
///   makes it wait for that child and start or reap no other process meanwhile (#4795);
/// - it passes its own blocked signal mask on (#4772), so a child could not be stopped
///   with SIGTERM.
public final class SpawnedProcess: Sendable {
    public let pid: pid_t
    private let directory: String
    private let exitStatus = Mutex<Int32?>(nil)

    /// `terminal` (a pseudo-terminal's path) starts the program in a session of its own
    /// with that terminal as its standard input and controlling terminal, as at a login;
    /// `stdin` is then ignored.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil, terminal: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nd-child-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try (stdin ?? Data()).write(to: URL(fileURLWithPath: directory + "/stdin"))

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let terminal {
            // Opened by a session leader without O_NOCTTY, it becomes the controlling terminal.
            posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, directory + "/stdin", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Nothing else of the test process: other tests' sockets, open at that moment and
        // not all close-on-exec, would count against a limit the child is started under
        // (`prlimit --nofile`) and keep their peers from seeing an end of file.
        #if canImport(Glibc)
        closeInheritedDescriptors(&actions)
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignalsBlocked = sigset_t()
        sigemptyset(&noSignalsBlocked)
        posix_spawnattr_setsigmask(&attributes, &noSignalsBlocked)
        #if canImport(Darwin)
        let newSession: Int32 = terminal == nil ? 0 : POSIX_SPAWN_SETSID
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_CLOEXEC_DEFAULT | newSession))
        #else
        // glibc's POSIX_SPAWN_SETSID, which Swift does not import; it takes effect before the
        // file actions, so the terminal opened there is the new session's.
        let newSession: Int32 = terminal == nil ? 0 : 0x80
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | newSession))
        #endif

        var merged = ProcessInfo.processInfo.environment
        // A developer's own daemon must never be reached by a test.
        merged["NOTIFYD_SOCKET"] = nil
        merged["XDG_RUNTIME_DIR"] = nil
        // Nor the developer's keyring: with no session bus, notifyd keeps passwords in files.
        merged["DBUS_SESSION_BUS_ADDRESS"] = nil
        merged["DISPLAY"] = nil
        for (key, value) in environment { merged[key] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL)
        }
        pid = child
    }

    /// `init` on a thread of its own, for tests in Swift concurrency: creating the files
    /// and spawning can wait on a busy disk or scheduler for seconds, and the pool's few
    /// threads must not (see `offThePool`).
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil,
                             terminal: String? = nil) async throws -> SpawnedProcess {
        try await offThePool { try SpawnedProcess(executable, arguments, environment: environment, stdin: stdin, terminal: terminal) }
    }

    deinit {
        // On a thread of its own too: the last reference may go on the pool.
        let (pid, directory, running) = (pid, directory, isRunning)
        NativeThread.startOrRunHere(name: "test-child-reap") {
            if running {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    public var standardOutput: String { (try? String(contentsOfFile: directory + "/stdout", encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "" }
    /// What the program wrote, byte for byte, for a test of bytes that are not valid UTF-8.
    public var standardOutputBytes: [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: directory + "/stdout"))) ?? Data()) }
    public var standardErrorBytes: [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: directory + "/stderr"))) ?? Data()) }

    /// The complete lines the program has printed, once there are at least `count` of
    /// them (or all there are after `seconds`, for the test to find too few).
    public func outputLines(atLeast count: Int, seconds: Double = 10) async -> [String] {
        func complete() -> [String] { standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
        _ = await eventually(seconds) { complete().count >= count }
        return complete()
    }

    public var isRunning: Bool { reap(blocking: false) == nil }

    /// Waits for the exit (up to `seconds`, then kills) and returns the status (128 + the
    /// signal's number for a child killed by a signal).
    @discardableResult
    public func wait(seconds: Double = 30) async -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if isRunning { kill(pid, SIGKILL) }
        return reap(blocking: true) ?? -1
    }

    /// `wait`, blocking the calling thread: for code that cannot suspend (an initializer,
    /// a dedicated thread).
    @discardableResult
    public func waitBlocking(seconds: Double = 30) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { usleep(5_000) }
        if isRunning { kill(pid, SIGKILL) }
        return reap(blocking: true) ?? -1
    }

    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    private func reap(blocking: Bool) -> Int32? {
        exitStatus.withLock { exitStatus in
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            guard waitpid(pid, &status, blocking ? 0 : WNOHANG) == pid else { return nil }
            let signal = status & 0x7f
            exitStatus = signal == 0 ? (status >> 8) & 0xff : 128 + signal
            return exitStatus
        }
    }
}

/// Runs a program to completion: status, stdout, stderr.
public func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil, seconds: Double = 30) async throws -> (status: Int32, output: String, error: String) {
    let child = try await SpawnedProcess.start(executable, arguments, environment: environment, stdin: stdin)
    let status = await child.wait(seconds: seconds)
    return (status, child.standardOutput, child.standardError)
}
