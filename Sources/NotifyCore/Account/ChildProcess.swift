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
        guard let wake = closingOnExecPipe() else {
            kill(-pid, SIGKILL)
            close(output.read)
            Child(pid: pid, wake: -1).reap()
            return nil
        }
        let child = Child(pid: pid, wake: wake.write)
        let readEnd = output.read
        let deadline = ContinuousClock.now + .seconds(max(0, timeout))
        // Reaped on a thread of its own, so that the child's end is seen while something it
        // started keeps the output open (`setsid sleep &`): the reader then stops waiting.
        NativeThread.start(name: "notifyd-reaper") { child.reap() }
        return await withTaskCancellationHandler {
            await NativeThread.run(name: "notifyd-child") {
                let output = collect(readEnd, wake: wake.read, deadline: deadline, child: child)
                close(readEnd)
                close(wake.read)
                return Finished(ending: child.ending, output: output)
            }
        } onCancel: {
            child.killUnlessReaped(.killedWhenCancelled)
        }
    }

    /// A started child: reaped on a thread of its own, and killed only while not yet
    /// reaped, so that a kill can never reach another process that reused its pid. A kill
    /// and the reaping each write a byte to `wake`, which the reader waits on beside the
    /// output.
    private final class Child: Sendable {
        let pid: pid_t
        private struct State {
            var killed: Finished.Ending?
            /// How it ended, once reaped.
            var reaped: Finished.Ending?
            /// The wake pipe's write end; -1 once closed, so that a late kill never writes
            /// to a descriptor number reused since.
            var wake: Int32
        }

        private let state: Mutex<State>

        init(pid: pid_t, wake: Int32) {
            self.pid = pid
            state = Mutex(State(killed: nil, reaped: nil, wake: wake))
        }

        func killUnlessReaped(_ why: Finished.Ending) {
            state.withLock { state in
                guard state.reaped == nil, state.killed == nil else { return }
                state.killed = why
                // The whole group: a command's own children (`sleep` under `sh -c`) would
                // otherwise live on, holding the output pipe open.
                kill(-pid, SIGKILL)
                Self.poke(state.wake)
            }
        }

        var isReaped: Bool { state.withLock { $0.reaped != nil } }
        var wasKilled: Bool { state.withLock { $0.killed != nil } }
        /// Why it was killed, or its exit status; read once reaped.
        var ending: Finished.Ending { state.withLock { $0.reaped ?? $0.killed ?? .killedWhenCancelled } }

        /// Waits for the child, on the reaper's thread. It is reaped under the lock, once it
        /// has ended: until then its pid is its own, and a kill reaches only its group.
        func reap() {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            state.withLock { state in
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let exited = Finished.Ending.exited(status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
                state.reaped = state.killed ?? exited
                Self.poke(state.wake)
                if state.wake >= 0 { close(state.wake) }
                state.wake = -1
            }
        }

        private static func poke(_ wake: Int32) {
            guard wake >= 0 else { return }
            var byte: UInt8 = 1
            _ = write(wake, &byte, 1)
        }
    }

    /// Reads the output until the child has ended and its output with it, keeping the first
    /// `outputLimit` bytes. Once the child has ended, what it wrote is in the pipe: that is
    /// taken, and whatever it started that still holds the pipe (`setsid sleep &`) is not
    /// waited for. Once it is killed (at the deadline, for too much output, or cancelled),
    /// reading stops at once; only its reaping, which the kill makes quick, is waited for.
    private static func collect(_ fd: Int32, wake: Int32, deadline: ContinuousClock.Instant, child: Child) -> Data {
        var output = Data()
        var outputOpen = true
        var buffer = [UInt8](repeating: 0, count: 4096)
        func take(_ count: Int) {
            if output.count + count > outputLimit { child.killUnlessReaped(.killedForOutput) }
            if output.count < outputLimit { output.append(contentsOf: buffer[..<min(count, outputLimit - output.count)]) }
        }
        while !child.isReaped && !child.wasKilled {
            let left = ContinuousClock.now.duration(to: deadline).components
            let remaining = Double(left.seconds) + Double(left.attoseconds) / 1e18
            if remaining <= 0 {
                child.killUnlessReaped(.killedAtDeadline)
                break
            }
            // A negative descriptor is left out by poll: the output once it has ended.
            var fds = [pollfd(fd: outputOpen ? fd : -1, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, Int32(min(remaining * 1000 + 1, 60_000))) >= 0 || errno == EINTR else { break }
            if fds[0].revents != 0 {
                let count = read(fd, &buffer, buffer.count)
                if count > 0 { take(count) } else if count == 0 || errno != EINTR { outputOpen = false }
            }
            if fds[1].revents != 0 { _ = read(wake, &buffer, 1) }
        }
        if outputOpen, !child.wasKilled {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // Bounded: what the command started may go on writing for ever.
            while output.count < outputLimit {
                let count = read(fd, &buffer, buffer.count)
                if count > 0 { take(count) } else if count == 0 || errno != EINTR { break }
            }
        }
        // The reaper's last byte; a kill has made it quick.
        while !child.isReaped {
            var byte: UInt8 = 0
            if read(wake, &byte, 1) == 0 { break }
        }
        return output
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
}
