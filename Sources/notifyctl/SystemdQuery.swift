#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyClient
import NotifySocket

/// Asks the user's systemd manager about notifyd's units, on the failure path only (a
/// command that reaches notifyd never runs it): `systemctl --user show`, at most 2 s,
/// its output bounded. Nil where there is no systemctl or no user manager answers.
enum SystemdQuery {
    static func units() -> SystemdUnits? {
        #if os(Linux)
        guard let output = run(["systemctl", "--user", "--no-pager", "show", SystemdUnits.properties] + SystemdUnits.units) else { return nil }
        return SystemdUnits(showOutput: output)
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// The program's standard output when it exits 0 within the deadline. It gets
    /// notifyctl's own environment, which tells it the user's manager (XDG_RUNTIME_DIR,
    /// DBUS_SESSION_BUS_ADDRESS).
    private static func run(_ arguments: [String]) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        close(writeEnd)
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = monotonicSeconds() + 2
        while output.count < 64 * 1024 {
            let left = end - monotonicSeconds()
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { break }
            let count = read(readEnd, &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        // Whatever it is still doing is of no use any more.
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitedCleanly = (status & 0x7f) == 0 && (status >> 8) & 0xff == 0
        return exitedCleanly ? String(decoding: output, as: UTF8.self) : nil
    }
    #endif
}
