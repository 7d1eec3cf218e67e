#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Small portability shims so socket code reads the same on Linux and macOS. Public for the
// other socket code of the package (the dev backend's HTTP server).

#if canImport(Glibc) || canImport(Musl)
/// Close-on-exec from the start: set afterwards, a process spawned by another thread in
/// between (a password command, a test's child) would inherit the socket and keep it open,
/// a listener answering after it was closed.
public let streamSocketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
/// Linux reports a closed peer with EPIPE unless told not to raise SIGPIPE per call.
public let sendFlags = Int32(MSG_NOSIGNAL)
#else
public let streamSocketType = SOCK_STREAM
public let sendFlags: Int32 = 0
#endif

/// Bytes `sun_path` can hold, the terminating NUL included (108 on Linux, 104 on macOS).
public let socketPathCapacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

public func currentUID() -> UInt32 { UInt32(getuid()) }

public func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// Retries a system call interrupted by a signal, as every blocking call here must.
@inlinable
public func retryingOnInterrupt<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

/// Seconds on a clock that only goes forward, for deadlines.
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
}

/// Seconds since 1970 on the system's clock, for what a person reads as a time: what
/// `Date()` gives, without linking the part of FoundationEssentials that `Date()` brings
/// into a small program (notifyctl), which relocates all of it at every start.
public func wallClockSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
}

public func setCloseOnExec(_ fd: Int32) {
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
}

/// `accept`, the connection close-on-exec from the start where the system can (see
/// `streamSocketType`); macOS's `posix_spawn` callers close what they do not pass instead.
public func acceptClosingOnExec(_ listener: Int32) -> Int32 {
    #if canImport(Glibc) || canImport(Musl)
    if let accept4 = linuxAccept4 { return accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue)) }
    #endif
    let fd = accept(listener, nil, nil)
    if fd >= 0 { setCloseOnExec(fd) }
    return fd
}

#if canImport(Glibc) || canImport(Musl)
/// glibc's `accept4`, which Swift's Glibc module does not declare (it wants _GNU_SOURCE).
private let linuxAccept4: (@convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32)? = {
    // RTLD_DEFAULT: the symbol as the process already has it.
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32).self)
}()
#endif

/// Fills a `sockaddr_un` for `path`; the caller has checked the length.
func withUnixAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        raw.copyBytes(from: bytes)
    }
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
}
