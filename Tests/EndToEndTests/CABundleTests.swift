import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The CA bundle is parsed once for the connections of a pool, not once per connection:
/// Debian's libcurl also names a CA directory, which keeps it from reusing what it parsed,
/// and a burst that opened 16 connections waited for 16 parses of some 140 certificates in
/// turn on the HTTP thread.
@Suite struct CABundleTests {
    @Test(.enabled(if: HTTP2FrontEnd.shouldRun, Comment(rawValue: HTTP2FrontEnd.skipReason)))
    func aBurstOverManyConnectionsReadsTheCABundleOnce() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        let backendPort = try backend.start()
        defer { backend.stop() }
        // HTTP/1.1 alone: a burst to many recipients opens a connection for each request in
        // flight, up to max_connections.
        let frontEnd = try await HTTP2FrontEnd(backendPort: backendPort, http2: false)
        let opens = try FileOpens(watching: frontEnd.directory.file("bundle.pem"))
        let daemon = try await DaemonUnderTest(backend: frontEnd.url, stateDirectory: frontEnd.directory.file("state"),
                                               launcher: frontEnd.trustingLauncher)
        try await daemon.logIn("alice")
        #expect(opens.take() >= 1, "the login's connection read the bundle notifyd trusts")
        let before = frontEnd.requests().count
        // Each send held 1 s at the backend: the burst's requests are in flight together.
        try backend.addFault(.init(route: .send, delay: 1))

        let recipients = 12
        let lines = (0..<recipients).map { #"{"id":\#($0),"cmd":"send","to":"user\#($0)","message":"message \#($0)"}"# }
        let replies = try await daemon.exchange(lines)
        #expect(replies.allSatisfy { $0.contains(#""state":"delivered""#) }, "\(replies)")

        let burst = frontEnd.requests().dropFirst(before)
        let opened = Set(burst.filter { $0.number == 1 }.map(\.connection)).count
        #expect(opened >= 4, "the burst opened connections of its own: \(burst)")
        // None, where the login's connection parsed it; one, where a network change (another
        // test's veth pair, say) had notifyd let that pool go: not one per connection.
        #expect(opens.take() <= 1, "\(opened) new connections, and the bundle parsed once served them all")
        await daemon.cleanUp()
        try await offThePool { frontEnd.stop() }
    }
}
