#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether anyone but this user (and root) could change what a path is or holds: the
/// question ssh's StrictModes asks of `~/.ssh` and the directories above it, and notifyd of
/// the directory of its socket and of its state directory. Whoever owns a directory, or may
/// write to it, can rename what is in it and put something of their own in its place.
public enum PathSafety {
    public enum Problem: Equatable, Sendable {
        case cannotInspect(String)
        case ownedBy(UInt32)
        /// Group or others may write it; the mode as `chmod` writes it.
        case writableByOthers(mode: String)
    }

    /// Nil when `path` (followed if it is a symlink) belongs to `uid`, or to root when
    /// `rootMayOwn`, and neither its group nor others may write to it, unless
    /// `stickyAllowed` and it has the sticky bit, as /tmp has: there nobody may rename or
    /// remove what another user put in it.
    public static func problem(at path: String, uid: UInt32, rootMayOwn: Bool = true, stickyAllowed: Bool) -> Problem? {
        var info = stat()
        guard stat(path, &info) == 0 else { return .cannotInspect(errnoText()) }
        return problem(of: info, uid: uid, rootMayOwn: rootMayOwn, stickyAllowed: stickyAllowed)
    }

    /// `problem(at:)` for what a `stat` of the path found: a caller that has one already
    /// (each of 100,000 outbox files, at each start) need not make a second.
    public static func problem(of info: stat, uid: UInt32, rootMayOwn: Bool = true, stickyAllowed: Bool) -> Problem? {
        let owner = UInt32(info.st_uid)
        guard rootMayOwn ? TrustedUser.includes(owner, own: uid) : owner == uid else { return .ownedBy(owner) }
        let writableByOthers = info.st_mode & 0o022 != 0
        let sticky = info.st_mode & mode_t(S_ISVTX) != 0
        if writableByOthers && !(stickyAllowed && sticky) {
            return .writableByOthers(mode: String(info.st_mode & 0o7777, radix: 8))
        }
        return nil
    }
}
