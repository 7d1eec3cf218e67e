#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket

/// notifyd closes its clients' connections as its stop ends, a moment before its process
/// exits; `stop` waits for the exit too, so that a notifyd started next finds the socket,
/// the lock and the state free.
enum ProcessExit {
    /// True once `pid` has exited (a zombie its parent has not reaped yet counts), or when
    /// it cannot be asked (another user's); false if it still runs at `deadline`.
    static func wait(for pid: Int32, until deadline: Double) -> Bool {
        // kill(0 or less) names a process group: nothing notifyd would answer.
        guard pid > 0 else { return true }
        while true {
            if kill(pid, 0) != 0 { return true } // ESRCH: gone; EPERM: not ours to watch
            if hasExited(pid) { return true }
            if monotonicSeconds() >= deadline { return false }
            usleep(2_000)
        }
    }

    /// Linux says a process that exited and awaits its parent's wait is a zombie ("Z" in
    /// /proc/PID/stat, after the command name in parentheses).
    private static func hasExited(_ pid: Int32) -> Bool {
        #if os(Linux)
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0, let end = buffer[..<count].lastIndex(of: UInt8(ascii: ")")), end + 2 < count else { return false }
        return buffer[end + 2] == UInt8(ascii: "Z")
        #else
        return false
        #endif
    }
}
