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
        // Every place writable by others is named at once, with one command for them all:
        // a umask of 002 leaves the file and each directory made for it so, and naming one
        // at a time took as many runs as there were.
        var writable: [(place: String, mode: String)] = []
        for (index, place) in StateDirectoryCheck.pathsUp(from: StateDirectoryCheck.resolvedPath(path), home: home).enumerated() {
            switch PathSafety.problem(at: place, uid: uid, stickyAllowed: index > 0) {
            case nil:
                continue
            case .cannotInspect(let reason):
                return "cannot check \(place), on the way to the config file: \(reason)"
            case .ownedBy(let owner):
                return "\(place) belongs to uid \(owner), \(danger); use a config file of your own (`chown \(uid) \(place)`, or --config)"
            case .writableByOthers(let mode):
                writable.append((place, mode))
            }
        }
        guard let first = writable.first else { return nil }
        let command = "`chmod go-w \(writable.map(\.place).joined(separator: " "))`"
        guard writable.count > 1 else { return "\(first.place) is writable by other users (mode \(first.mode)), \(danger); run \(command)" }
        let named = writable.map { "\($0.place) (mode \($0.mode))" }
        return "\(named.dropLast().joined(separator: ", ")) and \(named.last!) are writable by other users, \(danger); run \(command)"
    }
}
