import CPseudoTerminal
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pseudo-terminal a test holds both ends of: a program started on it
/// (`SpawnedProcess(…, terminal: path)`) reads and writes it as a user's terminal, and the
/// test sees its modes, holds its output, reads what it shows and types into it.
public final class PseudoTerminal: @unchecked Sendable {
    public let path: String
    private let leader: Int32
    /// Kept open so that the modes can be read and the output held at any time.
    private let follower: Int32

    public init() throws {
        var name = [CChar](repeating: 0, count: 128)
        leader = pseudo_terminal_open(&name, name.count)
        guard leader >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        follower = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard follower >= 0 else {
            let failure = errno
            close(leader)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
    }

    deinit {
        close(follower)
        close(leader)
    }

    /// Whether what is typed is shown.
    public var echoes: Bool {
        var modes = termios()
        tcgetattr(follower, &modes)
        return modes.c_lflag & tcflag_t(ECHO) != 0
    }

    /// Stops the output, as Ctrl-S does: a program writing to the terminal waits in `write`
    /// until `releaseOutput`.
    public func holdOutput() { tcflow(follower, TCOOFF) }
    public func releaseOutput() { tcflow(follower, TCOON) }

    public func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(leader, $0.baseAddress!, $0.count) }
    }

    /// What the terminal has shown since the last call, once it contains `text` (or all it
    /// has shown after `seconds`, for the test to find it missing).
    public func shown(containing text: String, seconds: Double = 10) -> String {
        var seen: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while !String(decoding: seen, as: UTF8.self).contains(text), Date() < deadline {
            var ready = pollfd(fd: leader, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) == 1 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(leader, $0.baseAddress!, $0.count) }
            // EIO: nothing has the terminal open any more.
            guard count > 0 else { break }
            seen += chunk[..<count]
        }
        return String(decoding: seen, as: UTF8.self)
    }

    /// The number /proc/PID/syscall gives `write`, where it can be read.
    private static var writeCall: String? {
        #if os(Linux) && arch(x86_64)
        "1"
        #elseif os(Linux) && arch(arm64)
        "64"
        #else
        nil
        #endif
    }

    /// Whether `isBeingWritten` can tell here.
    public static var seesWrites: Bool { writeCall != nil }

    /// Whether process `pid`, started on this terminal, waits in a `write` to it (Linux:
    /// /proc/PID/syscall names the call it is blocked in and its arguments). Written through
    /// /dev/tty counts: the program's controlling terminal is this one.
    public func isBeingWritten(by pid: pid_t) -> Bool {
        guard let write = Self.writeCall, let call = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8) else { return false }
        let fields = call.split(separator: " ")
        guard fields.count > 1, fields[0] == write, let descriptor = Int(fields[1].dropFirst(2), radix: 16) else { return false }
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
        return target == path || target == "/dev/tty"
    }
}
