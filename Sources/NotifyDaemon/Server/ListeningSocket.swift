#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifySocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's listening socket at a path it created, and the identity of the file it
/// bound, so that on exit it removes its own socket and never one that replaced it.
struct ListeningSocket: Sendable {
    let fd: Int32
    let path: String
    /// Handed over by systemd or launchd: theirs to create and remove, never unlinked here.
    let activated: Bool
    /// The private directory notifyd made for it ($XDG_RUNTIME_DIR/notifyd), removed with
    /// the socket when nothing else is left in it.
    var privateDirectory: String?
    private let device: UInt64
    private let inode: UInt64

    /// A listener from socket activation.
    static func adopt(_ fd: Int32, fallbackPath: String) -> ListeningSocket {
        ListeningSocket(fd: fd, path: SocketActivation.boundPath(fd) ?? fallbackPath, activated: true, device: 0, inode: 0)
    }

    /// Binds `location`, after making sure no other notifyd answers there. A socket file
    /// nobody answers on is stale (a crashed daemon) and is replaced; anything that is
    /// not a socket is left alone and refused.
    static func bind(_ location: SocketLocation, logger: Logger) throws(DaemonError) -> ListeningSocket {
        do {
            if let directory = location.privateDirectory {
                try preparePrivateDirectory(directory)
            } else {
                try checkSocketDirectory(holding: location.path)
            }
        } catch {
            throw .startup(error.message)
        }
        let path = location.path
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else {
                throw .startup("\(path) exists and is not a socket; refusing to replace it. Remove it or choose another path with --socket")
            }
            if UnixSocket.isAnswering(path: path) {
                throw .alreadyRunning("notifyd is already running on \(path); use `notifyctl status` to talk to it, or stop it first")
            }
            logger.notice("removing stale socket \(path) (no daemon answers on it)")
            unlink(path)
        }
        let fd: Int32
        do {
            fd = try UnixSocket.listen(path: path)
        } catch {
            throw .startup(error.message)
        }
        var bound = stat()
        _ = fstatat(AT_FDCWD, path, &bound, AT_SYMLINK_NOFOLLOW)
        return ListeningSocket(fd: fd, path: path, activated: false, privateDirectory: location.privateDirectory,
                               device: UInt64(bound.st_dev), inode: UInt64(bound.st_ino))
    }

    /// Closes the socket and removes the file if it is still the one this daemon bound.
    func closeAndRemove() {
        close(fd)
        guard !activated else { return }
        var info = stat()
        if lstat(path, &info) == 0, UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode {
            unlink(path)
        }
        // Only when empty: a socket another notifyd bound there meanwhile keeps it.
        if let privateDirectory { rmdir(privateDirectory) }
    }
}
