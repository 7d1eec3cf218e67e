import DevBackend
import Foundation
import Testing

@Suite struct LifecycleTests {
    @Test func stopIsSafeTwiceAndClosesTheListener() throws {
        let backend = DevBackendServer(options: DevBackend.Options(quiet: true))
        let port = try backend.start()
        #expect(port > 0)
        #expect(backend.port == port)
        #expect(backend.baseURL.absoluteString == "http://127.0.0.1:\(port)")
        let idle = try RawHTTPClient(port: port)
        backend.stop()
        backend.stop()
        // The idle keep-alive connection was closed too.
        #expect(try idle.isClosedByServer())
        #expect(throws: (any Error).self) { _ = try RawHTTPClient(port: port) }
    }

    @Test func aServerStartsOnceAndStopBeforeStartIsHarmless() throws {
        let unused = DevBackendServer()
        unused.stop()
        let backend = try startBackend()
        defer { backend.stop() }
        #expect(throws: (any Error).self) { try backend.start() }
    }

    @Test func aBadHostIsAnError() {
        let backend = DevBackendServer(options: DevBackend.Options(host: "localhost", quiet: true))
        defer { backend.stop() }
        #expect(throws: (any Error).self) { try backend.start() }
    }
}
