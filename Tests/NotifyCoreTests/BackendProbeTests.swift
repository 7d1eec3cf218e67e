#if !canImport(Darwin)
import CCurl
import DevBackend
import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// `HTTPBackend.probe` through libcurl against real loopback listeners: it connects and
/// sends nothing, tells a backend that is back from one that is not, and is bounded by
/// `request_timeout`; and a failed connect is told apart from a request that timed out.
@Suite struct BackendProbeTests {
    static func backend(timeout: Double = 10) -> HTTPBackend {
        HTTPBackend(settings: SettingsStore(.init(allowInsecureHTTP: true, requestTimeout: timeout)))
    }

    @Test func aProbeConnectsAndSendsNoRequest() async throws {
        let server = DevBackendServer(options: .init(quiet: true))
        try server.start()
        defer { server.stop() }
        let backend = Self.backend()
        #expect(backend.probes)
        #expect(await backend.probe(server.baseURL.absoluteString, tls: false))
        #expect(await eventually { server.acceptedConnections == 1 })
        #expect(await backend.probe(server.baseURL.absoluteString, tls: false))
        #expect(await eventually { server.acceptedConnections == 2 }, "a connection of its own each time")
        // The probe closes what it opened; once the server is done with both connections,
        // anything sent on them has been read and logged.
        #expect(await eventually { server.endedConnections == 2 }, "the probes' connections were closed")
        #expect(server.requests().isEmpty, "no HTTP request reached the backend")
    }

    /// A port held bound without listening: refused, and no other test can take it meanwhile.
    @Test func aBackendThatIsNotThereIsNotReached() async throws {
        let closed = try LoopbackSocket(listening: false)
        defer { closed.close() }
        #expect(await !Self.backend().probe(closed.url, tls: false))
    }

    /// A listener that takes no connection (its backlog full) holds a connect until the
    /// timeout: the probe gives up then, and a request says it made no connection.
    @Test func aConnectThatTimesOutIsBoundedAndToldFromATimedOutRequest() async throws {
        let listener = try LoopbackSocket(listening: true)
        defer { listener.close() }
        let backend = Self.backend(timeout: 0.5)
        let started = Date()
        #expect(await !backend.probe(listener.url, tls: false))
        #expect(Date().timeIntervalSince(started) < 10, "bounded by request_timeout")

        let account = BackendAccount(baseURL: URL(string: listener.url)!, user: "alice", password: "alice")
        let result = await backend.sendNotification(pns: "apns", toTag: "bob", body: "hi", account: account)
        guard case .failure(.unreachable(let reason, noRoute: false, connecting: true)) = result else {
            Issue.record("expected a connect timeout, got \(result)")
            return
        }
        #expect(reason.hasSuffix("no connection in time"), "\(reason)")
        #expect(HTTPFailure.Kind(curlCode: Int32(NCURL_OPERATION_TIMEDOUT), systemError: 0, words: "Operation timed out after 500 milliseconds with 0 bytes received") == .timedOut)
        #expect(HTTPFailure.Kind(curlCode: Int32(NCURL_OPERATION_TIMEDOUT), systemError: 0, words: "Resolving timed out after 500 milliseconds") == .connectTimedOut)
        // The attempt's own deadline checked before the transfer's, as when libcurl's loop wakes late.
        #expect(HTTPFailure.Kind(curlCode: Int32(NCURL_OPERATION_TIMEDOUT), systemError: ETIMEDOUT,
                                 words: "Failed to connect to 127.0.0.1 port 1 after 512 ms: Timeout was reached") == .connectTimedOut)
    }

    @Test func aProbeURLNamesOnlyTheHostAndPort() throws {
        #expect(HTTPBackend.probeURL("https://user:secret@backend.example/app/?x=1#f", tls: false)?.absoluteString == "http://backend.example:443/")
        #expect(HTTPBackend.probeURL("https://backend.example:8443/app", tls: false)?.absoluteString == "http://backend.example:8443/")
        #expect(HTTPBackend.probeURL("https://user:secret@backend.example/app", tls: true)?.absoluteString == "https://backend.example/")
        #expect(HTTPBackend.probeURL("http://127.0.0.1:8080/app", tls: false)?.absoluteString == "http://127.0.0.1:8080/")
        #expect(HTTPBackend.probeURL("not a url", tls: false) == nil)
    }
}

/// A loopback TCP socket on a port of its own. Listening, it never accepts and its backlog
/// is filled, so a connect to it waits for an answer to its SYN that never comes; not
/// listening, a connect to its port is refused.
final class LoopbackSocket: Sendable {
    let url: String
    private let descriptors: [Int32]

    init(listening: Bool) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, !listening || listen(fd, 0) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        var descriptors = [fd]
        // Past what a backlog of 0 holds on Linux: later SYNs are dropped.
        for _ in 0..<(listening ? 3 : 0) {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            descriptors.append(client)
        }
        self.descriptors = descriptors
        url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
    }

    func close() {
        for fd in descriptors { _ = Glibc.close(fd) }
    }
}
#endif
