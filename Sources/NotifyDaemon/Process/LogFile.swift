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
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return Opened(fd: fd)
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
