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
import NotifySocket
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
        let fd = try Self.openChecked(path, creating: true)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return Opened(fd: fd)
    }

    /// Why a start would not use `path` as its log file, asked by `--check-config`: what a
    /// start checks, without creating or changing anything. Nil when it may be used.
    public static func problem(_ path: String?) -> String? {
        guard let path else { return nil }
        do {
            guard FileManager.default.fileExists(atPath: path) else {
                try checkDirectories(of: path)
                return nil
            }
            close(try openChecked(path, creating: false))
            return nil
        } catch {
            return error.description
        }
    }

    /// Opens `path` to append to, after checking the directories it is in, and checks what
    /// was opened. O_NONBLOCK: a FIFO no one reads would make `open` wait for ever, and
    /// every reload after this one with it; it fails instead (ENXIO). Writes then block as
    /// on standard error. O_NOCTTY: a terminal named here must not become notifyd's.
    private static func openChecked(_ path: String, creating: Bool) throws(Problem) -> Int32 {
        let shared = try checkDirectories(of: path)
        // In a directory others may add to (sticky, as /tmp), the name may be theirs: a
        // symbolic link there is not followed.
        let flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (creating ? O_CREAT : 0) | (shared ? O_NOFOLLOW : 0)
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else {
            let reason = shared && errno == ELOOP ? "it is a symbolic link in a directory others may write to" : String(cString: strerror(errno))
            throw Problem(description: "cannot open the log file \(path): \(reason)")
        }
        if let refusal = refusal(of: fd, path: path, repairing: creating) {
            close(fd)
            throw Problem(description: "cannot use the log file \(path): \(refusal)")
        }
        return fd
    }

    /// Whoever owns a directory the log file is in, or may write to it, could put a
    /// symbolic link in its place, and notifyd would append to (and make 0600) whatever
    /// file of this user's the link names: so each directory above it, up to the home
    /// directory (or /), must belong to this user or root and be writable by nobody else,
    /// as the config file's must. One with the sticky bit (/tmp) may be: returns true when
    /// the log file's own directory is such a one. A directory not made yet is made 0700.
    @discardableResult
    private static func checkDirectories(of path: String) throws(Problem) -> Bool {
        let directory = StateDirectoryCheck.resolvedPath(FilePath.directory(of: path))
        var shared = false
        for (index, place) in StateDirectoryCheck.pathsUp(from: directory, home: FilePath.homeDirectory()).enumerated()
        where FileManager.default.fileExists(atPath: place) {
            switch PathSafety.problem(at: place, uid: currentUID(), stickyAllowed: true) {
            case nil:
                var info = stat()
                if index == 0, stat(place, &info) == 0, info.st_mode & 0o022 != 0 { shared = true }
            case .cannotInspect(let reason):
                throw Problem(description: "cannot check \(place), on the way to the log file \(path): \(reason)")
            case .ownedBy(let owner):
                throw Problem(description: "cannot use the log file \(path): \(place) belongs to uid \(owner), who could put a link there "
                              + "and have notifyd write to a file of yours; use a directory of your own")
            case .writableByOthers(let mode):
                throw Problem(description: "cannot use the log file \(path): \(place) is writable by other users (mode \(mode)), who could put "
                              + "a link there and have notifyd write to a file of yours; run `chmod go-w \(place)`")
            }
        }
        return shared
    }

    /// What the log file opened (a symbolic link's target, if it is one) must be: a
    /// regular file of this user's, made 0600 as one notifyd creates is, or a FIFO (a
    /// reader such as a log shipper), or /dev/null. A device would lose every line
    /// (`/dev/full`) or stall on a terminal; another user's file is theirs to read.
    static func refusal(of fd: Int32, path: String, repairing: Bool = true) -> String? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return String(cString: strerror(errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFIFO:
            return nil
        case S_IFREG:
            guard info.st_uid == getuid() else { return "it belongs to uid \(info.st_uid), not to you (uid \(getuid()))" }
            if repairing, info.st_mode & 0o077 != 0, fchmod(fd, 0o600) != 0 {
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
