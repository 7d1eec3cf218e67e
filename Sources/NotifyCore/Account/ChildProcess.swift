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
import Synchronization
import NotifySystem

/// Runs a command and collects what it prints, as the password command and the keyring's
/// `secret-tool` need: the environment notifyd was given (`LibraryEnvironment`), standard
/// input from `input` (else /dev/null; a secret goes there, never into the arguments or the
/// environment, which `ps` shows), standard error on /dev/null or with the output, SIGPIPE
/// back to its default (notifyd ignores it, and an ignored signal would
/// stay ignored in the child), and killed, with whatever it started (its process group),
/// if it runs past `timeout`, prints more than `outputLimit`, or the task waiting for it is
/// cancelled. FoundationEssentials has no `Process`; this is how notifyd starts a child.
enum ChildProcess {
    struct Finished: Sendable {
        enum Ending: Sendable, Equatable {
            case exited(Int32)
            case killedAtDeadline
            case killedForOutput
            case killedWhenCancelled
        }

        var ending: Ending
        /// Standard output, at most `outputLimit` bytes of it.
        var output: Data

        /// The exit status, or nil when it was killed.
        var status: Int32? {
            if case .exited(let status) = ending { status } else { nil }
        }
    }

    static let outputLimit = 64 * 1024

    /// Nil when the command could not be started at all.
    static func run(shell command: String, timeout: Double) async -> Finished? {
        await run(["/bin/sh", "-c", command], timeout: timeout)
    }

    /// Runs `arguments[0]` (looked up in PATH when it has no slash), with `environment`
    /// (NAME=value, winning over notifyd's own) added. `input`, a few bytes at most (it must
    /// fit the pipe: nothing reads the output meanwhile), is written before the child is
    /// waited for.
    static func run(_ arguments: [String], input: Data? = nil, withStandardError: Bool = false,
                    environment extra: [String] = [], timeout: Double) async -> Finished? {
        guard input.map({ $0.count <= 4096 }) ?? true, let output = closingOnExecPipe() else { return nil }
        let stdin = input == nil ? nil : closingOnExecPipe()
        if input != nil && stdin == nil {
            close(output.read)
            close(output.write)
            return nil
        }
        let started = spawn(arguments, stdin: stdin?.read, stdout: output.write, withStandardError: withStandardError,
                            environment: extra + LibraryEnvironment.forChildren())
        close(output.write)
        if let stdin {
            close(stdin.read)
            if started != nil, let input {
                // A child that exits without reading makes this fail (EPIPE: SIGPIPE is
                // ignored in notifyd); its exit status then says what happened.
                _ = input.withUnsafeBytes { write(stdin.write, $0.baseAddress, $0.count) }
            }
            close(stdin.write)
        }
        guard let pid = started else {
            close(output.read)
            return nil
        }
        let readEnd = output.read

        let child = Child(pid: pid)
        let timer = Task {
            try? await Task.sleep(for: .seconds(timeout))
            if !Task.isCancelled { child.killUnlessReaped(.killedAtDeadline) }
        }
        let finished: Finished = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                NativeThread.start(name: "notifyd-child") {
                    let output = readAll(readEnd) { child.killUnlessReaped(.killedForOutput) }
                    close(readEnd)
                    let ending = child.reap()
                    continuation.resume(returning: Finished(ending: ending, output: output))
                }
            }
        } onCancel: {
            child.killUnlessReaped(.killedWhenCancelled)
        }
        timer.cancel()
        return finished
    }

    /// A started child: reaped on a thread of its own, and killed only while not yet
    /// reaped, so that a kill can never reach another process that reused its pid.
    private final class Child: Sendable {
        let pid: pid_t
        /// Reaped, and why it was killed, if it was.
        private let state = Mutex<(reaped: Bool, killed: Finished.Ending?)>((false, nil))

        init(pid: pid_t) { self.pid = pid }

        func killUnlessReaped(_ why: Finished.Ending) {
            state.withLock { state in
                guard !state.reaped, state.killed == nil else { return }
                state.killed = why
                // The whole group: a command's own children (`sleep` under `sh -c`) would
                // otherwise live on, holding the output pipe open.
                kill(-pid, SIGKILL)
            }
        }

        /// Waits for the child: how it ended.
        func reap() -> Finished.Ending {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let killed = state.withLock { state in
                state.reaped = true
                return state.killed
            }
            if let killed { return killed }
            return .exited(status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
        }
    }

    private static func closingOnExecPipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        return (ends[0], ends[1])
    }

    private static func spawn(_ arguments: [String], stdin: Int32?, stdout: Int32, withStandardError: Bool, environment: [String]) -> pid_t? {
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        if withStandardError {
            posix_spawn_file_actions_adddup2(&actions, stdout, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        #if canImport(Glibc)
        closeInheritedDescriptors(&actions)
        #endif
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // A process group of its own (group id = its pid), so a timeout ends all of it.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        guard posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp) == 0 else { return nil }
        return pid
    }

    /// Reads to the end, keeping the first `outputLimit` bytes; past them, `tooMuch` (which
    /// kills the command, so the end comes) is called once.
    private static func readAll(_ fd: Int32, tooMuch: () -> Void) -> Data {
        var output = Data()
        var overflowed = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return output }
            if output.count + count > outputLimit, !overflowed {
                overflowed = true
                tooMuch()
            }
            if output.count < outputLimit { output.append(contentsOf: buffer[..<min(count, outputLimit - output.count)]) }
        }
    }
}
