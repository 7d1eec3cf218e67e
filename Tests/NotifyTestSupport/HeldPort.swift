import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port kept bound, not listening, while a backend that used it is down: a
/// connect to it is refused, as to a stopped backend, and the kernel hands the port to no
/// other test's server (one that asks for any free port) before the backend comes back.
public final class HeldPort: Sendable {
    private let fd: Int32

    /// Holds `port` once the backend that listened on it has let it go: a child another
    /// thread is spawning may hold a copy of the listener until it runs its program (a
    /// traced one, for a long moment), and the port is busy meanwhile.
    public static func hold(_ port: Int) async throws -> HeldPort {
        var lastError: any Error = POSIXError(.EADDRINUSE)
        for _ in 0..<200 {
            do {
                return try HeldPort(port)
            } catch let error as POSIXError where error.code == .EADDRINUSE {
                lastError = error
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        throw lastError
    }

    private init(_ port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        // The backend's last connections may linger in TIME_WAIT on the port.
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0 else {
            if fd >= 0 { close(fd) }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE)
        }
    }

    /// Lets the port go, for the backend to listen on it again at once.
    public func release() {
        close(fd)
    }
}
