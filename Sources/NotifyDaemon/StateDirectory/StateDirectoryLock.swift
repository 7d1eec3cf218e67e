#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock on the state directory, so two daemons on different sockets cannot
/// both write the same state. The kernel drops it when the process dies, even by SIGKILL.
final class StateDirectoryLock: Sendable {
    private let fd: Int32

    init(directory: String) throws(DaemonError) {
        let path = directory + "/notifyd.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .startup("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw .alreadyRunning("another notifyd is using the state directory \(directory); stop it first (`notifyctl status` shows its socket)")
        }
        self.fd = fd
    }

    func release() {
        _ = flock(fd, LOCK_UN)
        close(fd)
    }
}

public enum DaemonError: Error, CustomStringConvertible, Equatable {
    case alreadyRunning(String)
    case startup(String)
    /// Something only the user can fix (an unsafe state directory, a file a newer notifyd
    /// wrote): `main` exits with EX_CONFIG, and the service manager does not restart it.
    case configuration(String)

    public var description: String {
        switch self {
        case .alreadyRunning(let message), .startup(let message), .configuration(let message): message
        }
    }

    public var isConfigurationError: Bool {
        if case .configuration = self { true } else { false }
    }
}
