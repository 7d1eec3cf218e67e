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
import NotifyCore
import Synchronization

/// `log_file`: a file put in the place of standard error, so that everything written there
/// goes to it, Foundation's own warnings too. It is opened again at every reload and
/// SIGHUP, under the same name too: once logrotate has renamed it, the log goes on in a
/// new file of that name instead of the renamed one. Without `log_file`, standard error is
/// the one notifyd was given (the journal, under systemd).
public final class LogFile: Sendable {
    /// A copy of the standard error notifyd was given, to go back to when a reload removes
    /// `log_file`; close-on-exec, so no password command inherits it.
    private let given: Int32
    private let givenIsJournal: Bool
    private let replaced = Atomic<Bool>(false)

    public init(environment: [String: String]) {
        given = fcntl(2, F_DUPFD_CLOEXEC, 3)
        givenIsJournal = environment["JOURNAL_STREAM"] != nil
    }

    /// Whether log lines go to the journal, which wants `<N>` priorities, not timestamps.
    public var isJournal: Bool { givenIsJournal && !replaced.load(ordering: .relaxed) }

    /// A log file opened (`prepare`), not yet in use: `use` or `discard` it.
    public struct Opened: Sendable {
        /// -1 for the standard error notifyd was given.
        fileprivate let fd: Int32
    }

    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Opens `path` to append to (0600; its directory is made 0700 if missing: usually the
    /// state directory, which may not exist yet), or readies the given standard error for
    /// nil. Blocks on the file system: never call it on the concurrency pool.
    public func prepare(_ path: String?) throws(Problem) -> Opened {
        guard let path else { return Opened(fd: -1) }
        try? FileManager.default.createDirectory(atPath: FilePath.directory(of: path), withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        // O_NONBLOCK: a FIFO no one reads would make `open` wait for ever, and every reload
        // after this one with it; it fails instead (ENXIO). Writes then block as on standard
        // error. O_NOCTTY: a terminal named here must not become notifyd's.
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0o600)
        guard fd >= 0 else { throw Problem(description: "cannot open the log file \(path): \(String(cString: strerror(errno)))") }
        if let refusal = Self.refusal(of: fd, path: path) {
            close(fd)
            throw Problem(description: "cannot use the log file \(path): \(refusal)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return Opened(fd: fd)
    }

    /// What the log file opened (a symbolic link's target, if it is one) must be: a
    /// regular file of this user's, made 0600 as one notifyd creates is, or a FIFO (a
    /// reader such as a log shipper), or /dev/null. A device would lose every line
    /// (`/dev/full`) or stall on a terminal; another user's file is theirs to read.
    static func refusal(of fd: Int32, path: String) -> String? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return String(cString: strerror(errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFIFO:
            return nil
        case S_IFREG:
            guard info.st_uid == getuid() else { return "it belongs to uid \(info.st_uid), not to you (uid \(getuid()))" }
            if info.st_mode & 0o077 != 0, fchmod(fd, 0o600) != 0 {
                return "it can be read by others (mode \(String(info.st_mode & 0o777, radix: 8))) and cannot be made 0600: \(String(cString: strerror(errno)))"
            }
            return nil
        case S_IFCHR where StateDirectoryCheck.resolvedPath(path) == "/dev/null":
            return nil
        default:
            return "it is not a regular file or a FIFO (a device would lose or hold up the lines written to it)"
        }
    }

    /// Puts `opened` in the place of standard error. A line being written meanwhile goes
    /// whole to the old file or the new one: `dup2` swaps them in one step.
    public func use(_ opened: Opened) {
        _ = dup2(opened.fd >= 0 ? opened.fd : given, 2)
        replaced.store(opened.fd >= 0, ordering: .relaxed)
        discard(opened)
    }

    public func discard(_ opened: Opened) {
        if opened.fd >= 0 { close(opened.fd) }
    }
}
