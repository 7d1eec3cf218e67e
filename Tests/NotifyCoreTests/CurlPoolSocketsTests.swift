#if !canImport(Darwin)
import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The pool's count of its open sockets, which decides whether a burst over HTTP/2 needs a
/// standby connection: a socket libcurl closes without its close-socket callback (a
/// connection attempt it gave up) is not counted as open for ever.
@Suite struct CurlPoolSocketsTests {
    /// A loopback listener that never accepts, its one place in the queue taken: a
    /// connection to it waits for its handshake until the client gives up.
    final class FullListener {
        let fd: Int32
        let port: Int
        private var queued: [Int32] = []

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
            } && listen(listener, 0) == 0
            fd = listener
            port = Int(UInt16(bigEndian: address.sin_port))
            guard listening else { throw POSIXError(.EADDRNOTAVAIL) }
            // Fill the accept queue: a backlog of 0 holds one, and later handshakes get no answer.
            for _ in 0..<2 {
                let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                var target = Self.loopback(port: port)
                _ = withUnsafePointer(to: &target) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                queued.append(client)
            }
            // The first has its place once its handshake is done; then none is left.
            var first = pollfd(fd: queued[0], events: Int16(POLLOUT), revents: 0)
            guard poll(&first, 1, 10_000) == 1 else { throw POSIXError(.ETIMEDOUT) }
        }

        deinit {
            for client in queued { close(client) }
            close(fd)
        }

        static func loopback(port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            return address
        }
    }

    @Test func aConnectionAttemptGivenUpIsNotCountedAsOpen() throws {
        var error = [CChar](repeating: 0, count: 256)
        try #require(ncurl_hold(&error, error.count) == 0)
        defer { ncurl_release() }
        let multi = try #require(ncurl_multi_new(4))
        defer { ncurl_multi_free(multi) }
        let listener = try FullListener()

        // Called outside `#require`, which takes a call's arguments apart: the URL's C string
        // would live no longer than the macro's own call with it.
        let started = ncurl_transfer_start(multi, "http://127.0.0.1:\(listener.port)/", "GET", nil, 0, nil, 0, 0, 10_000, 300, 1024, 1, 60, 0)
        let transfer = try #require(started)
        var finished: UnsafeMutableRawPointer?
        var opened = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while finished == nil && ContinuousClock.now < deadline {
            ncurl_multi_wait(multi, 100)
            ncurl_multi_perform(multi)
            opened = max(opened, Int(ncurl_multi_open_sockets(multi)))
            finished = ncurl_next_finished(multi)
        }
        try #require(finished == transfer, "the attempt did not end")
        var status = 0
        #expect(ncurl_transfer_result(transfer, &status) == NCURL_OPERATION_TIMEDOUT, "\(String(cString: ncurl_transfer_error_text(transfer)))")
        ncurl_transfer_free(multi, transfer)
        #expect(opened == 1, "the attempt's socket was counted while it waited")
        #expect(ncurl_multi_open_sockets(multi) == 0, "the socket of the attempt libcurl gave up is still counted")
    }
}
#endif
