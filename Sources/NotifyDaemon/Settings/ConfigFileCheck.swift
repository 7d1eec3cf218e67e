#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifySocket

/// What must hold of the config file before notifyd takes a setting from it: it can name
/// a `password_command`, which notifyd runs as its user, so, as for the state directory
/// (`StateDirectoryCheck`), nobody else may be able to change it. The file and every
/// directory above it (up to the home directory when it is inside it, up to `/` when it
/// is not) must belong to this user or root and not be writable by its group or others;
/// a directory above it may be if it has the sticky bit, as `/tmp` does. Checked at start,
/// at `--check-config` and at every reload: a failing check is a problem that changes
/// nothing, like a setting that cannot be used.
enum ConfigFileCheck {
    /// Why the config file at `path` may not be used, or nil when it may (or is absent).
    static func problem(_ path: String, home: String = FilePath.homeDirectory(), uid: UInt32 = currentUID()) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let danger = "who could make notifyd run a command of theirs as you (password_command)"
        for (index, place) in StateDirectoryCheck.pathsUp(from: StateDirectoryCheck.resolvedPath(path), home: home).enumerated() {
            switch PathSafety.problem(at: place, uid: uid, stickyAllowed: index > 0) {
            case nil:
                continue
            case .cannotInspect(let reason):
                return "cannot check \(place), on the way to the config file: \(reason)"
            case .ownedBy(let owner):
                return "\(place) belongs to uid \(owner), \(danger); use a config file of your own (`chown \(uid) \(place)`, or --config)"
            case .writableByOthers(let mode):
                return "\(place) is writable by other users (mode \(mode)), \(danger); run `chmod go-w \(place)`"
            }
        }
        return nil
    }
}
