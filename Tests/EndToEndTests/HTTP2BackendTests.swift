import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd against a backend behind an HTTP/2 front end (nginx): `max_connections`
/// counts connections there, each carrying many requests, so a burst to more recipients
/// than that goes side by side on one connection, each recipient's messages still in order.
@Suite struct HTTP2BackendTests {
    static let recipients = 20
    static let perRecipient = 2

    @Test(.enabled(if: HTTP2FrontEnd.shouldRun, Comment(rawValue: HTTP2FrontEnd.skipReason)))
    func aBurstToMoreRecipientsThanMaxConnectionsGoesSideBySideOnOneConnection() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        let backendPort = try backend.start()
        defer { backend.stop() }
        let frontEnd = try await HTTP2FrontEnd(backendPort: backendPort)
        let state = frontEnd.directory.file("state")
        let first = try await DaemonUnderTest(backend: frontEnd.url, stateDirectory: state, launcher: frontEnd.trustingLauncher)
        try await first.logIn("alice")
        await first.cleanUp()
        // A notifyd started afresh, which has no connection yet and has not heard the
        // backend speak HTTP/2: the burst opens its first connection.
        let daemon = try await DaemonUnderTest(backend: frontEnd.url, stateDirectory: state, launcher: frontEnd.trustingLauncher)
        let before = frontEnd.requests().count
        // Each send held 1 s at the backend: the requests of a burst overlap for certain.
        try backend.addFault(.init(route: .send, delay: 1))

        let count = Self.recipients * Self.perRecipient
        let lines = (0..<count).map { #"{"id":\#($0),"cmd":"send","to":"user\#($0 % Self.recipients)","message":"message \#($0)"}"# }
        let replies = try await daemon.exchange(lines)
        #expect(replies.count == count)
        // Delivered, or, for a request refused by two GOAWAYs in a row (10 requests a
        // connection makes that possible on a loaded machine), queued for its retry after
        // the connection was lost: never failed, and each message at the backend once.
        let settled = replies.filter { $0.contains(#""state":"delivered""#) || $0.contains("the connection was lost") }
        #expect(settled.count == count, "\(replies.filter { !settled.contains($0) })")
        #expect(await eventually(30) { backend.pushes().count == count })
        #expect(Set(backend.pushes().map(\.displayedText)).count == count, "each message once")

        let burst = frontEnd.requests().dropFirst(before).filter { $0.target.hasPrefix("/api/notifications") }
        #expect(burst.count == count)
        #expect(burst.allSatisfy { $0.httpVersion == "HTTP/2.0" && $0.status == 200 }, "\(burst)")
        #expect(burst.contains { $0.number == 1 }, "the burst opened the connection it went on: \(burst)")
        #expect(Set(burst.map(\.connection)).count == 1,
                "one connection: the requests that came before the backend said it speaks HTTP/2 waited for it to say so: \(burst)")
        // Each request is held 1 s: 20 arriving within half of that were under way together,
        // one per recipient, and none of a recipient's messages overtook the one before.
        let together = HTTP2FrontEnd.mostArrivingTogether(Array(burst), within: 0.5)
        #expect(together == Self.recipients,
                "every recipient's lane in flight at once, beyond max_connections (16): \(together) at once: \(burst.map(\.start))")

        // Order per recipient: each one's messages reached the backend as they were sent.
        let pushes = backend.pushes()
        for recipient in 0..<Self.recipients {
            let payloads = pushes.filter { $0.toTag == "user\(recipient)" }.map(\.payload)
            let expected = (0..<Self.perRecipient).map { "message \(recipient + $0 * Self.recipients)" }
            #expect(payloads.count == expected.count && zip(payloads, expected).allSatisfy { $0.contains($1) }, "user\(recipient): \(payloads)")
        }
        await daemon.cleanUp()
        try await offThePool { frontEnd.stop() }
    }

    /// A server ends an HTTP/2 connection after so many requests (nginx's
    /// `keepalive_requests`) and refuses the streams sent after them: the burst goes on
    /// over one new connection, and at most one spare (kept for the next GOAWAY, which
    /// then costs no handshake), not one per request then in flight.
    @Test(.enabled(if: HTTP2FrontEnd.shouldRun, Comment(rawValue: HTTP2FrontEnd.skipReason)))
    func aConnectionTheServerEndsIsReplacedByOneConnectionAndOneSpareAtMost() async throws {
        let perConnection = 10
        let backend = DevBackendServer(options: .init(quiet: true))
        let backendPort = try backend.start()
        defer { backend.stop() }
        // 10 ms away: a new connection takes its handshake's round trips, while the requests
        // refused and the lanes' next ones are started (on loopback it is there at once).
        let frontEnd = try await HTTP2FrontEnd(backendPort: backendPort, requestsPerConnection: perConnection, delayMilliseconds: 10)
        // The login's request came over HTTP/2 on the connection the burst starts on.
        let daemon = try await DaemonUnderTest(backend: frontEnd.url, stateDirectory: frontEnd.directory.file("state"),
                                               launcher: frontEnd.trustingLauncher)
        try await daemon.logIn("alice")
        // Each send held at the backend: every recipient's request is in flight when the
        // server's count runs out, so most of them are refused and sent again.
        try backend.addFault(.init(route: .send, delay: 0.3))

        let count = Self.recipients * Self.perRecipient
        let lines = (0..<count).map { #"{"id":\#($0),"cmd":"send","to":"user\#($0 % Self.recipients)","message":"message \#($0)"}"# }
        let replies = try await daemon.exchange(lines)
        #expect(replies.count == count)
        // Delivered, or, for a request refused by two GOAWAYs in a row (10 requests a
        // connection makes that possible on a loaded machine), queued for its retry after
        // the connection was lost: never failed, and each message at the backend once.
        let settled = replies.filter { $0.contains(#""state":"delivered""#) || $0.contains("the connection was lost") }
        #expect(settled.count == count, "\(replies.filter { !settled.contains($0) })")
        #expect(await eventually(30) { backend.pushes().count == count })
        #expect(Set(backend.pushes().map(\.displayedText)).count == count, "each message once")

        // nginx logs the requests it took; the refused ones are not among them. A
        // connection per `perConnection` requests, each used to the last, is one at a time;
        // the spare may add one (one that has carried nothing is not in the log). Without
        // the limit, a connection per request in flight at a GOAWAY: 12 for 41 requests.
        let requests = frontEnd.requests()
        #expect(requests.filter { $0.target.hasPrefix("/api/notifications") }.count == count)
        let connections = Dictionary(grouping: requests, by: \.connection)
        #expect(connections.count <= (requests.count + perConnection - 1) / perConnection + 1,
                "\(requests.count) requests on \(connections.count) connections: \(connections.mapValues(\.count).sorted { $0.key < $1.key })")
        await daemon.cleanUp()
        try await offThePool { frontEnd.stop() }
    }
}
