import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback TCP server that plays one script per connection, on a thread each, and
/// counts what a client did to it: connections accepted, connections open at once,
/// requests read. For the HTTP client's own behaviour (timeouts, reuse, bounds), which
/// the dev backend cannot misbehave enough to show.
final class ScriptedHTTPServer: Sendable {
    /// What the script may do with its connection.
    struct Connection {
        let fd: Int32
        let server: ScriptedHTTPServer

        /// Reads one request (headers and a Content-Length body); nil at end of stream.
        func readRequest() -> String? {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                if let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                    let length = head.split(separator: "\r\n").compactMap { line -> Int? in
                        let parts = line.split(separator: ":", maxSplits: 1)
                        guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                        return Int(parts[1].trimmingCharacters(in: .whitespaces))
                    }.first ?? 0
                    while bytes.count < end.upperBound + length {
                        let count = recv(fd, &buffer, buffer.count, 0)
                        guard count > 0 else { return nil }
                        bytes += buffer[..<count]
                    }
                    server.state.withLock { $0.requests += 1 }
                    return head
                }
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { return nil }
                bytes += buffer[..<count]
            }
        }

        /// Writes all of `text`; false once the client has gone.
        @discardableResult
        func write(_ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }

        /// Blocks until the client closes the connection.
        func waitForClose() {
            var byte: UInt8 = 0
            while recv(fd, &byte, 1, 0) > 0 {}
        }
    }

    struct Counts {
        var accepted = 0
        var open = 0
        var mostOpen = 0
        var requests = 0
        var stopped = false
    }

    let port: UInt16
    private let listener: Int32
    fileprivate let state = Mutex(Counts())

    var counts: Counts { state.withLock { $0 } }
    var url: URL { URL(string: "http://127.0.0.1:\(port)/api/register")! }

    init(script: @escaping @Sendable (Connection) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let listening = listener
        Thread { [self] in
            // This thread alone closes the listener, after its last accept(): were stop()
            // to close it, an accept() begun just after would run on whatever descriptor
            // reused the number, such as another test's server, and serve that test's
            // client this script.
            defer { close(listening) }
            while true {
                let fd = accept(listening, nil, nil)
                if state.withLock({ $0.stopped }) {
                    if fd >= 0 { close(fd) }
                    return
                }
                guard fd >= 0 else {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                state.withLock {
                    $0.accepted += 1
                    $0.open += 1
                    $0.mostOpen = max($0.mostOpen, $0.open)
                }
                Thread { [self] in
                    script(Connection(fd: fd, server: self))
                    state.withLock { $0.open -= 1 }
                    close(fd)
                }.start()
            }
        }.start()
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Stops accepting; connections end with their scripts.
    func stop() {
        state.withLock { $0.stopped = true }
        // Wakes the accept() in progress: Linux ends it with EINVAL; elsewhere the
        // connection made here does, and is closed unserved.
        shutdown(listener, Int32(SHUT_RDWR))
        let waker = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: port)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(waker, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        close(waker)
    }
}
