#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Listening sockets handed over by the service manager, so the socket exists (and
/// queues connections) before notifyd runs, and notifyd starts on the first connection.
public enum SocketActivation {
    /// systemd's protocol: `LISTEN_PID` is our pid and `LISTEN_FDS` counts sockets from fd 3.
    /// The variables are removed so no child process takes the sockets for its own.
    public static func systemdListener(environment: [String: String]) -> Int32? {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        let passed = systemdDescriptors(environment: environment)
        guard !passed.isEmpty else { return nil }
        for fd in passed { setCloseOnExec(fd) }
        return passed.lowerBound
    }

    /// The descriptors systemd passed to this process (none when `LISTEN_PID` names another).
    public static func systemdDescriptors(environment: [String: String]) -> Range<Int32> {
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), (1...1024).contains(count)
        else { return 3..<3 }
        return 3..<(3 + count)
    }

    /// launchd's: the socket named in the LaunchAgent's `Sockets` dictionary.
    public static func launchdListener(name: String) -> Int32? {
        #if os(macOS)
        // launch_activate_socket lives in libSystem; looked up at run time so the code
        // needs no bridging header.
        typealias Activate = @convention(c) (UnsafePointer<CChar>, UnsafeMutablePointer<UnsafeMutablePointer<Int32>?>, UnsafeMutablePointer<Int>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: -2), "launch_activate_socket") else { return nil }
        let activate = unsafeBitCast(symbol, to: Activate.self)
        var fds: UnsafeMutablePointer<Int32>?
        var count = 0
        guard activate(name, &fds, &count) == 0, let fds, count > 0 else { return nil }
        defer { free(fds) }
        return fds[0]
        #else
        return nil
        #endif
    }

    /// The path a listening Unix socket is bound to.
    public static func boundPath(_ fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0, Int32(address.sun_family) == AF_UNIX else { return nil }
        return withUnsafeBytes(of: &address.sun_path) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }
}

/// sd_notify(3) by hand: a datagram of `KEY=VALUE` lines to `$NOTIFY_SOCKET`, so systemd
/// knows when a `Type=notify` service is ready and when it is stopping.
public struct ServiceManagerNotifier: Sendable {
    public let address: String?

    /// Reads `$NOTIFY_SOCKET` and removes it from the environment (children must not use it).
    public static func fromEnvironment(_ environment: [String: String]) -> ServiceManagerNotifier {
        defer { unsetenv("NOTIFY_SOCKET") }
        return ServiceManagerNotifier(address: environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 })
    }

    public init(address: String?) {
        self.address = address
    }

    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let address else { return false }
        #if canImport(Glibc) || canImport(Musl)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        setCloseOnExec(fd)
        var path = Array(address.utf8)
        // "@name" is Linux's abstract namespace: a leading NUL, and the length says where it ends.
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        guard path.count < socketPathCapacity else { return false }
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &target.sun_path) { raw in
            raw.initializeMemory(as: UInt8.self, repeating: 0)
            raw.copyBytes(from: path)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        let length = socklen_t(abstract ? pathOffset + path.count : MemoryLayout<sockaddr_un>.size)
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, sendFlags, address, length) }
            }
        }
        return sent == bytes.count
    }
}
