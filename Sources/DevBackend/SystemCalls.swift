#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket

// Portability shims so the socket code reads the same on Linux and macOS.

// The shims shared with the daemon's socket code (streamSocketType, sendFlags, errnoText,
// retryingOnInterrupt, setCloseOnExec) come from NotifySocket.

let pollReadable = Int16(POLLIN)
/// Any of these on a descriptor means "stop waiting on it".
let pollFailure = Int16(POLLERR | POLLHUP | POLLNVAL)

func setNonBlocking(_ fd: Int32, _ enabled: Bool) {
    let flags = fcntl(fd, F_GETFL)
    guard flags >= 0 else { return }
    _ = fcntl(fd, F_SETFL, enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
}

func setSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
    var value = value
    _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
}

func disableSigpipe(_ fd: Int32) {
    #if canImport(Darwin)
    setSocketOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1)
    #endif
}

/// Bounds how long a send may block, so a client that stops reading cannot pin a
/// connection thread (and with it `stop()`) forever.
func setSendTimeout(_ fd: Int32, seconds: Int) {
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
}

/// Writes all of `bytes`, or reports that the peer is gone.
func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes.withUnsafeBytes { raw in
            retryingOnInterrupt {
                send(fd, raw.baseAddress! + offset, raw.count - offset, sendFlags)
            }
        }
        if sent <= 0 { return false }
        offset += sent
    }
    return true
}
