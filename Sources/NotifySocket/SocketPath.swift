#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the control socket lives. notifyd and notifyctl resolve it with this same code,
/// so they always agree.
public struct SocketLocation: Sendable, Equatable {
    public enum Source: String, Sendable {
        case flag = "--socket"
        case environment = "NOTIFYD_SOCKET"
        case runtimeDirectory = "XDG_RUNTIME_DIR"
        case temporaryDirectory = "TMPDIR"
    }

    public var path: String
    public var source: Source
    /// The private directory notifyd creates (0700) and checks; nil for a path the user chose.
    public var privateDirectory: String?
    /// Said once when the location is a fallback the user may not expect.
    public var warning: String?

    /// Resolves, in order: `--socket`, `$NOTIFYD_SOCKET`, `$XDG_RUNTIME_DIR/notifyd/notifyd.sock`,
    /// then `$TMPDIR` (or /tmp) `/notifyd-<uid>/notifyd.sock`.
    public static func resolve(flag: String?, environment: [String: String], uid: UInt32 = currentUID()) throws(SocketError) -> SocketLocation {
        try resolve(flag: flag, variable: { environment[$0] }, uid: uid)
    }

    /// `resolve`, reading the environment one variable at a time (`getenv`): for notifyctl,
    /// which would otherwise build a dictionary of the whole environment for three names.
    public static func resolve(flag: String?, variable: (String) -> String?, uid: UInt32 = currentUID()) throws(SocketError) -> SocketLocation {
        let location: SocketLocation
        if let flag, !flag.isEmpty {
            location = SocketLocation(path: flag, source: .flag)
        } else if let fromEnvironment = variable("NOTIFYD_SOCKET"), !fromEnvironment.isEmpty {
            location = SocketLocation(path: fromEnvironment, source: .environment)
        } else if let runtime = variable("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            let directory = joined(runtime, "notifyd")
            location = SocketLocation(path: joined(directory, "notifyd.sock"), source: .runtimeDirectory, privateDirectory: directory)
        } else {
            var temporary = variable("TMPDIR") ?? "/tmp"
            if !temporary.hasPrefix("/") { temporary = "/tmp" }
            let directory = joined(temporary, "notifyd-\(uid)")
            location = SocketLocation(
                path: joined(directory, "notifyd.sock"), source: .temporaryDirectory, privateDirectory: directory,
                warning: "XDG_RUNTIME_DIR is not set; using \(directory) for the socket")
        }
        try location.checkLength()
        return location
    }

    public init(path: String, source: Source, privateDirectory: String? = nil, warning: String? = nil) {
        self.path = path
        self.source = source
        self.privateDirectory = privateDirectory
        self.warning = warning
    }

    func checkLength() throws(SocketError) {
        let length = path.utf8.count
        if length >= socketPathCapacity {
            throw SocketError(.pathTooLong, "socket path \(path) is \(length) bytes; Unix sockets allow at most \(socketPathCapacity - 1) here. Choose a shorter path with --socket or NOTIFYD_SOCKET.")
        }
    }

    private static func joined(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

/// Makes sure a socket directory is ours alone: created 0700 when missing, and
/// refused when it is a symlink, someone else's, or open to others.
public func preparePrivateDirectory(_ directory: String, uid: UInt32 = currentUID()) throws(SocketError) {
    if mkdir(directory, 0o700) == 0 {
        // The umask may have taken bits away (never added any); make the mode exact.
        _ = chmod(directory, 0o700)
    } else if errno != EEXIST {
        throw SocketError(.unsafeDirectory, "cannot create \(directory): \(errnoText())")
    }
    var info = stat()
    guard lstat(directory, &info) == 0 else {
        throw SocketError(.unsafeDirectory, "cannot inspect \(directory): \(errnoText())")
    }
    guard (info.st_mode & S_IFMT) == S_IFDIR else {
        throw SocketError(.unsafeDirectory, "\(directory) is not a directory (a symlink or a file is there); remove it and start notifyd again")
    }
    guard UInt32(info.st_uid) == uid else {
        throw SocketError(.unsafeDirectory, "\(directory) belongs to uid \(info.st_uid), not to you (uid \(uid)); refusing to put the socket there")
    }
    let openToOthers = info.st_mode & 0o077
    if openToOthers != 0 {
        let mode = String(info.st_mode & 0o777, radix: 8)
        throw SocketError(.unsafeDirectory, "\(directory) is open to other users (mode \(mode)); run `chmod 700 \(directory)` and start notifyd again")
    }
}

/// Makes sure nobody else can replace a socket at a path the user chose (`--socket`,
/// `NOTIFYD_SOCKET`): the directory that holds it must belong to this user or to root, and
/// must not be writable by others unless its sticky bit is set (as /tmp's is), since
/// whoever can rename files there could put a listener of their own in notifyd's place and
/// be handed the password by the next `notifyctl login`.
public func checkSocketDirectory(holding path: String, uid: UInt32 = currentUID()) throws(SocketError) {
    let directory = parentDirectory(of: path)
    switch PathSafety.problem(at: directory, uid: uid, stickyAllowed: true) {
    case nil:
        return
    case .cannotInspect(let reason):
        throw SocketError(.unsafeDirectory, "cannot use \(directory) for the socket: \(reason)")
    case .ownedBy(let owner):
        throw SocketError(.unsafeDirectory, "\(directory) belongs to uid \(owner), who could replace the socket; choose a directory of your own with --socket or NOTIFYD_SOCKET")
    case .writableByOthers(let mode):
        throw SocketError(.unsafeDirectory, "\(directory) is writable by other users (mode \(mode)) and has no sticky bit, so another user could replace the socket; run `chmod go-w \(directory)` (or `chmod +t`), or choose a private directory with --socket or NOTIFYD_SOCKET")
    }
}

/// The directory part of a socket path: "." for a bare name, "/" for one at the root.
func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let directory = String(path[..<slash])
    return directory.isEmpty ? "/" : directory
}
