#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking Unix stream socket calls. Callers run them on their own threads, never on
/// the Swift concurrency pool.
public enum UnixSocket {
    /// Connects to `path`. A missing file or a file nobody listens on is `.notRunning`.
    /// `timeout` bounds the connect, which on Linux waits while the listener's queue is
    /// full: a listener that accepts nothing cannot hold the caller.
    public static func connect(path: String, timeout: Double? = nil) throws(SocketError) -> Int32 {
        guard path.utf8.count < socketPathCapacity else {
            throw SocketError(.pathTooLong, "socket path \(path) is too long for a Unix socket")
        }
        let fd = socket(AF_UNIX, streamSocketType, 0)
        guard fd >= 0 else { throw SocketError(.io, "cannot create a socket: \(errnoText())") }
        setCloseOnExec(fd)
        disableSigpipe(fd)
        if let timeout { setSendTimeout(fd, seconds: timeout) }
        let result = withUnixAddress(path) { address, length in
            retryingOnInterrupt { Glibc_or_Darwin_connect(fd, address, length) }
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case ENOENT, ECONNREFUSED, ENOTSOCK:
                throw SocketError(.notRunning, "no notifyd is listening on \(path) (\(errnoText(code)))")
            case EAGAIN, EINPROGRESS:
                throw SocketError(.io, "timed out connecting to \(path): whatever listens there takes no connection")
            default:
                throw SocketError(.io, "cannot connect to \(path): \(errnoText(code))")
            }
        }
        return fd
    }

    /// True when something accepts connections on `path`.
    public static func isAnswering(path: String) -> Bool {
        guard let fd = try? connect(path: path) else { return false }
        close(fd)
        return true
    }

    /// Binds and listens on `path`, creating the socket file with mode 0600. The caller
    /// has removed any stale file first: this never unlinks.
    public static func listen(path: String, backlog: Int32 = SOMAXCONN) throws(SocketError) -> Int32 {
        guard path.utf8.count < socketPathCapacity else {
            throw SocketError(.pathTooLong, "socket path \(path) is too long for a Unix socket")
        }
        let fd = socket(AF_UNIX, streamSocketType, 0)
        guard fd >= 0 else { throw SocketError(.io, "cannot create a socket: \(errnoText())") }
        setCloseOnExec(fd)
        // Bound under a name of its own and linked to `path` once it listens: a client that
        // finds the path finds a listener, and is never refused by a socket bound but not
        // yet listening (notifyctl run just after notifyd would say nothing listens). A link
        // fails where a file is in the way, as bind does, so nothing already there is
        // replaced. Where the name of its own would not fit, bound at `path` itself.
        let own = Self.temporaryName(beside: path)
        let bound = own ?? path
        guard withUnixAddress(bound, { address, length in bind(fd, address, length) }) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(.io, "cannot bind \(path): \(errnoText(code))")
        }
        func fail(_ message: String, code: Int32) -> SocketError {
            close(fd)
            unlink(bound)
            return SocketError(.io, "\(message): \(errnoText(code))")
        }
        // The mode is set before listen(): until then nobody can connect, whatever the mode
        // was at bind. (A umask around bind would do it too, but the umask is process-wide
        // and would change the mode of anything another thread creates meanwhile.)
        guard chmod(bound, 0o600) == 0 else { throw fail("cannot make \(path) private", code: errno) }
        guard Glibc_or_Darwin_listen(fd, backlog) == 0 else { throw fail("cannot listen on \(path)", code: errno) }
        if let own {
            guard link(own, path) == 0 else { throw fail("cannot bind \(path)", code: errno) }
            unlink(own)
        }
        return fd
    }

    /// A name in the directory of `path` for binding before the socket listens, or nil
    /// when it would not fit in a socket address.
    private static func temporaryName(beside path: String) -> String? {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let name = directory + "/.binding-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        return name.utf8.count < socketPathCapacity ? name : nil
    }

    /// The uid of the process at the other end, or nil when the system will not say.
    public static func peerUID(_ fd: Int32) -> UInt32? {
        #if canImport(Glibc) || canImport(Musl)
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return UInt32(credentials.uid)
        #else
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard getpeereid(fd, &uid, &gid) == 0 else { return nil }
        return UInt32(uid)
        #endif
    }

    /// Writes all of `bytes`, retrying short writes. Throws when the peer has gone, or when
    /// `deadline` (on `monotonicSeconds()`'s clock) passes first: a peer that reads a byte
    /// now and then cannot hold the writer.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], deadline: Double? = nil) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            if let deadline {
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let remaining = deadline - monotonicSeconds()
                let ready = remaining > 0 ? poll(&entry, 1, Int32(min(remaining * 1000, 3_600_000).rounded(.up))) : 0
                if ready == 0 { throw SocketError(.io, "timed out writing: the other end reads nothing") }
                if ready < 0 && errno == EINTR { continue }
            }
            let flags = deadline == nil ? sendFlags : sendFlags | Int32(MSG_DONTWAIT)
            let written = bytes.withUnsafeBytes { raw in
                retryingOnInterrupt { send(fd, raw.baseAddress! + offset, raw.count - offset, flags) }
            }
            if written < 0 {
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK {
                    if deadline != nil { continue }
                    throw SocketError(.io, "timed out writing: the other end reads nothing")
                }
                throw SocketError(.io, "write failed: \(errnoText(code))")
            }
            offset += written
        }
    }

    /// Makes reads on `fd` give up after `seconds` (EAGAIN), so a client never hangs forever.
    public static func setReceiveTimeout(_ fd: Int32, seconds: Double) {
        setTimeout(fd, SO_RCVTIMEO, seconds: seconds)
    }

    /// Makes a connect and each write on `fd` give up after `seconds` (EAGAIN).
    public static func setSendTimeout(_ fd: Int32, seconds: Double) {
        setTimeout(fd, SO_SNDTIMEO, seconds: seconds)
    }

    private static func setTimeout(_ fd: Int32, _ option: Int32, seconds: Double) {
        // Zero would mean "never": the shortest wait the system keeps instead; and a year
        // is as good as forever, where a larger number would not fit.
        let seconds = min(max(seconds, 0.001), 365 * 86_400)
        var interval = timeval()
        interval.tv_sec = .init(seconds.rounded(.down))
        interval.tv_usec = .init((seconds - seconds.rounded(.down)) * 1_000_000)
        _ = setsockopt(fd, SOL_SOCKET, option, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func disableSigpipe(_ fd: Int32) {
        #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Sets SO_NOSIGPIPE where the platform needs it per socket (macOS); Linux uses MSG_NOSIGNAL.
    public static func prepareAcceptedSocket(_ fd: Int32) {
        setCloseOnExec(fd)
        disableSigpipe(fd)
        // macOS hands accepted sockets the listener's O_NONBLOCK (an activated listener may
        // have it); the connection threads read blocking.
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 && flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }
}

// `connect` and `listen` are shadowed by the static methods above; these reach the C ones.
@inline(__always)
private func Glibc_or_Darwin_connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

@inline(__always)
private func Glibc_or_Darwin_listen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    listen(fd, backlog)
}

#if canImport(Glibc) || canImport(Musl)
/// Linux's `struct ucred`, which Glibc's module map hides behind _GNU_SOURCE.
private struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
#endif
