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

/// What must hold of the state directory before notifyd reads or writes anything in it.
/// Run by `main` before the daemon is made (which reads the state and the credentials),
/// and again by `Daemon.start` once the directory exists, when `main` did not find it.
///
/// The state directory holds the password and the messages notifyd sends in its user's
/// name, so, as ssh's StrictModes does for `~/.ssh`, nobody else may be able to change it:
/// whoever can rename entries in it or in a directory above it can swap it for their own
/// and have notifyd send their messages with its user's password. Refused, naming the path
/// and what to do:
/// - the state directory, its outbox, or a directory above it, up to and including the
///   home directory when it is inside it (as ssh stops there: what is above home is the
///   system's), up to `/` when it is not, that belongs to another user than this one and
///   root, or that its group or others may write to; a directory above it may if it has
///   the sticky bit, as `/tmp` does;
/// - a file in the state directory or its outbox (state, credentials, outbox entries, the
///   lock, the log) that is not this user's, or that its group or others may write to.
public enum StateDirectoryCheck {
    /// Why notifyd may not use `directory` as it is, or nil when it may.
    public static func problem(_ directory: String) -> String? {
        do throws(DaemonError) {
            try run(directory)
            return nil
        } catch {
            return error.description
        }
    }

    public static func run(_ directory: String, home: String = FilePath.homeDirectory(), uid: UInt32 = currentUID()) throws(DaemonError) {
        try checkOwnership(directory, home: home, uid: uid)
        do {
            // Starting would overwrite them with what this notifyd knows of them.
            try StateStore(directory: directory).refuseNewerFormat()
            try CredentialStore(directory: directory).refuseNewerFormat()
            try RetiredRegistrationStore(directory: directory).refuseNewerFormat()
            try OutboxStore(stateDirectory: directory).refuseNewerFormat()
        } catch {
            throw .configuration(error.description)
        }
    }

    static func checkOwnership(_ directory: String, home: String, uid: UInt32) throws(DaemonError) {
        let resolved = resolvedPath(directory)
        // Those that do not exist yet are made by notifyd, 0700; the nearest that does is checked.
        for (index, path) in pathsUp(from: resolved, home: home).enumerated() where FileManager.default.fileExists(atPath: path) {
            try checkDirectory(path, of: directory, uid: uid, stickyAllowed: index > 0)
        }
        guard FileManager.default.fileExists(atPath: resolved) else { return }
        let outbox = OutboxStore(stateDirectory: resolved).directory
        if FileManager.default.fileExists(atPath: outbox) {
            try checkDirectory(outbox, of: directory, uid: uid, stickyAllowed: false)
        }
        for folder in [resolved, outbox] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                try checkFile(FilePath.join(folder, name), uid: uid)
            }
        }
    }

    private static func checkDirectory(_ path: String, of directory: String, uid: UInt32, stickyAllowed: Bool) throws(DaemonError) {
        let danger = "who could replace the state directory \(directory) and what notifyd keeps in it"
        switch PathSafety.problem(at: path, uid: uid, stickyAllowed: stickyAllowed) {
        case nil:
            return
        case .cannotInspect(let reason):
            throw .configuration("cannot check \(path), on the way to the state directory \(directory): \(reason)")
        case .ownedBy(let owner):
            throw .configuration("\(path) belongs to uid \(owner), \(danger); choose a state directory of your own with --state-dir or state_dir")
        case .writableByOthers(let mode):
            let fix = stickyAllowed ? "`chmod go-w \(path)` (or `chmod +t \(path)`)" : "`chmod go-w \(path)`"
            throw .configuration("\(path) is writable by other users (mode \(mode)), \(danger); run \(fix), or choose another state directory with --state-dir or state_dir")
        }
    }

    private static func checkFile(_ path: String, uid: UInt32) throws(DaemonError) {
        var info = stat()
        // Gone meanwhile, or a dangling link: nothing anyone could make notifyd read.
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else { return }
        switch PathSafety.problem(of: info, uid: uid, rootMayOwn: false, stickyAllowed: false) {
        case nil, .cannotInspect:
            return
        case .ownedBy(let owner):
            throw .configuration("\(path) belongs to uid \(owner), not to you (uid \(uid)), so someone else may have put it in the state directory; look at it, then remove it or `chown \(uid) \(path)`")
        case .writableByOthers(let mode):
            throw .configuration("\(path) is writable by other users (mode \(mode)), who could change what notifyd reads from it; run `chmod go-w \(path)`")
        }
    }

    /// `resolved` and the directories above it, up to and including the home directory
    /// when it is inside it (as ssh stops there: what is above home is the system's), up
    /// to `/` when it is not.
    static func pathsUp(from resolved: String, home: String) -> [String] {
        let resolvedHome = resolvedPath(home)
        let underHome = resolvedHome != "/" && (resolved == resolvedHome || resolved.hasPrefix(resolvedHome + "/"))
        let top = underHome ? resolvedHome : "/"
        var paths = [resolved]
        while let last = paths.last, last != top, last != "/" {
            paths.append(FilePath.directory(of: last))
        }
        return paths
    }

    /// The path with symbolic links, `.` and `..` resolved, as far as it exists; what does not
    /// exist yet is appended as given.
    static func resolvedPath(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FilePath.join(FileManager.default.currentDirectoryPath, path)
        var existing = absolute
        var rest: [String] = []
        while existing != "/" && !FileManager.default.fileExists(atPath: existing) {
            rest.insert(FilePath.name(of: existing), at: 0)
            existing = FilePath.directory(of: existing)
        }
        guard let real = realpath(existing, nil) else { return absolute }
        defer { free(real) }
        return rest.reduce(String(cString: real)) { FilePath.join($0, $1) }
    }
}
