#if !canImport(Darwin)
import Foundation
import Synchronization
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// `keep_alive`: how long the HTTP thread keeps an unused connection, and with it libcurl.
/// Past it, with no request under way, the pool and libcurl are let go, and the next
/// request takes them back.
@Suite struct KeepAliveTests {
    static func transport(keepAlive: Double, connections: Int = 4) -> (CurlTransport, SettingsStore) {
        let settings = SettingsStore(.init(requestTimeout: 10, maxConnections: connections, keepAlive: keepAlive))
        return (CurlTransport(settings: settings, replyLimit: HTTPBackend.defaultReplyLimit), settings)
    }

    /// A reload that changes `keep_alive` alone.
    static func publish(keepAlive seconds: Double, to settings: SettingsStore) async {
        var changed = settings.current
        changed.keepAlive = seconds
        await settings.publish(changed)
    }

    static func isOK(_ outcome: HTTPOutcome) -> Bool {
        if case .response(200, _, _, _) = outcome { return true }
        return false
    }

    /// A request not awaited: a request whose pool went would never be answered, and the
    /// test would hang instead of failing.
    final class RequestLeftToRun: Sendable {
        private let answer = Mutex<Bool?>(nil)
        /// Whether it was answered 200, once answered.
        var ok: Bool? { answer.withLock { $0 } }

        init(_ transport: CurlTransport, _ server: ScriptedHTTPServer) {
            Task { [self] in
                let ok = KeepAliveTests.isOK(await transport.perform(HTTPTransportTests.post(server)))
                answer.withLock { $0 = ok }
            }
        }
    }

    /// A server answering 200 to every request, after `before` has run for it (given the
    /// request's number, counted from 1 across connections).
    static func answering(before: @escaping @Sendable (_ request: Int) -> Void = { _ in }) throws -> ScriptedHTTPServer {
        let served = Atomic<Int>(0)
        return try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil {
                let number = served.add(1, ordering: .relaxed).newValue
                before(number)
                connection.write(HTTPTransportTests.okReply)
            }
        }
    }

    @Test func libcurlIsLetGoOnceKeepAliveHasPassedAndTakenBackForTheNextRequest() async throws {
        let server = try Self.answering()
        defer { server.stop() }
        let (transport, _) = Self.transport(keepAlive: 1)
        defer { transport.invalidate() }
        #expect(!transport.holdsLibcurl, "loaded before any request")
        #expect(Self.isOK(await transport.perform(HTTPTransportTests.post(server))))
        #expect(await eventually { !transport.holdsLibcurl }, "still held after keep_alive")
        // Taken back, on a new connection: the pool went with it.
        #expect(Self.isOK(await transport.perform(HTTPTransportTests.post(server))))
        #expect(server.counts.accepted == 2)
        #expect(await eventually { !transport.holdsLibcurl })
    }

    /// A request that takes longer than `keep_alive` is not cut off by it.
    @Test func aRequestUnderWayKeepsLibcurlHeld() async throws {
        // The request is answered only once the test has looked: how long it took to
        // arrive on a busy machine does not matter.
        let release = DispatchSemaphore(value: 0)
        let server = try Self.answering { _ in release.wait() }
        defer { server.stop() }
        defer { release.signal() }
        let (transport, _) = Self.transport(keepAlive: 1)
        defer { transport.invalidate() }
        let request = RequestLeftToRun(transport, server)
        #expect(await eventually { server.counts.requests == 1 })
        // A second transport falls idle only now, with twice the keep_alive: once it lets go,
        // the first, counting its request's time as idle, would have let go a second before.
        let other = try Self.answering()
        defer { other.stop() }
        let (later, _) = Self.transport(keepAlive: 2)
        defer { later.invalidate() }
        #expect(Self.isOK(await later.perform(HTTPTransportTests.post(other))))
        #expect(await eventually { !later.holdsLibcurl }, "the other transport never let go")
        #expect(request.ok == nil && transport.holdsLibcurl, "let go while a request ran")
        release.signal()
        #expect(await eventually { request.ok == true }, "not answered")
        #expect(await eventually { !transport.holdsLibcurl })
    }

    /// The longest `keep_alive` a setting takes, 100 years, is more than `curl_multi_poll`
    /// waits at once or `CURLOPT_MAXAGE_CONN` holds; both take it without overflowing.
    @Test func theLongestKeepAliveIsTaken() async throws {
        let server = try Self.answering()
        defer { server.stop() }
        let (transport, _) = Self.transport(keepAlive: 36500 * 86400)
        defer { transport.invalidate() }
        for _ in 0..<2 { #expect(Self.isOK(await transport.perform(HTTPTransportTests.post(server)))) }
        #expect(server.counts.accepted == 1, "the connection was not reused")
        #expect(transport.holdsLibcurl)
        // Stopping lets go at once.
        transport.invalidate()
        #expect(await eventually { !transport.holdsLibcurl })
    }

    /// A reload that shortens `keep_alive` is taken at once, not after the old one.
    @Test func aShorterKeepAliveFromAReloadLetsGoAtTheNewTime() async throws {
        let server = try Self.answering()
        defer { server.stop() }
        let (transport, settings) = Self.transport(keepAlive: 3600)
        defer { transport.invalidate() }
        #expect(Self.isOK(await transport.perform(HTTPTransportTests.post(server))))
        await Self.publish(keepAlive: 1, to: settings)
        #expect(await eventually { !transport.holdsLibcurl }, "held for the old keep_alive")
    }

    /// libcurl reuses no connection left unused longer than `keep_alive`, even while
    /// another request keeps the pool: its own limit (118 s) is not the one in effect.
    @Test func aConnectionUnusedLongerThanKeepAliveIsNotReused() async throws {
        // The first request holds its connection until the end; the others are answered at once.
        let release = DispatchSemaphore(value: 0)
        let server = try Self.answering { if $0 == 1 { release.wait() } }
        defer { server.stop() }
        // Run first: a test that ends early must not leave the server's thread waiting.
        defer { release.signal() }
        let (transport, _) = Self.transport(keepAlive: 1)
        defer { transport.invalidate() }
        let slow = RequestLeftToRun(transport, server)
        #expect(await eventually { server.counts.requests == 1 })
        #expect(Self.isOK(await transport.perform(HTTPTransportTests.post(server))))
        #expect(server.counts.accepted == 2)
        // The scenario, not a wait for a result: the connection must age past keep_alive
        // (libcurl counts whole seconds, and reuses one unused for up to one more). A loaded
        // machine only ages it more: the check holds however much longer the sleep takes.
        try await Task.sleep(for: .milliseconds(2200))
        #expect(Self.isOK(await transport.perform(HTTPTransportTests.post(server))))
        #expect(server.counts.accepted == 3, "a connection unused for 2 s was reused")
        release.signal()
        #expect(await eventually { slow.ok == true })
    }
}
#endif
