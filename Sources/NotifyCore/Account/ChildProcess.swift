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

/// Runs a shell command and collects what it prints, as the password command needs: the
/// environment notifyd was given (`LibraryEnvironment`), standard input and error on
/// /dev/null, SIGPIPE back to its default (notifyd ignores it, and an ignored signal would
/// stay ignored in the child), and killed, with whatever it started (its process group),
/// if it runs past `timeout`, prints more than `outputLimit`, or the task waiting for it is
/// cancelled. FoundationEssentials has no `Process`; this is the one child notifyd starts.
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
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return nil }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        guard let pid = spawn(command, stdout: writeEnd) else {
            close(readEnd)
            close(writeEnd)
            return nil
        }
        close(writeEnd)

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

    private static func spawn(_ command: String, stdout: Int32) -> pid_t? {
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
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // A process group of its own (group id = its pid), so a timeout ends all of it.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        let environment: [UnsafeMutablePointer<CChar>?] = LibraryEnvironment.forChildren().map { strdup($0) } + [nil]
        defer { (arguments + environment).forEach { free($0) } }
        guard posix_spawn(&pid, "/bin/sh", &actions, &attributes, arguments, environment) == 0 else { return nil }
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
