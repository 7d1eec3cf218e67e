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
        // Each send held 2 s at the backend: the requests of a burst overlap for certain,
        // even where a loaded machine (or strace) spreads their departures over a second.
        let held = 2.0
        try backend.addFault(.init(route: .send, delay: held))

        let count = Self.recipients * Self.perRecipient
        let lines = (0..<count).map { #"{"id":\#($0),"cmd":"send","to":"user\#($0 % Self.recipients)","message":"message \#($0)"}"# }
        let replies = try await daemon.exchange(lines)
        #expect(replies.count == count)
        #expect(replies.allSatisfy { $0.contains(#""state":"delivered""#) }, "\(replies.filter { !$0.contains(#""state":"delivered""#) })")

        let burst = frontEnd.requests().dropFirst(before).filter { $0.target.hasPrefix("/api/notifications") }
        #expect(burst.count == count)
        #expect(burst.allSatisfy { $0.httpVersion == "HTTP/2.0" && $0.status == 200 }, "\(burst)")
        #expect(burst.contains { $0.number == 1 }, "the burst opened the connection it went on: \(burst)")
        #expect(Set(burst.map(\.connection)).count == 1,
                "one connection: the requests that came before the backend said it speaks HTTP/2 waited for it to say so: \(burst)")
        // 20 under way together: one per recipient, none of a recipient's messages
        // overtaking the one before.
        let together = HTTP2FrontEnd.mostInFlight(Array(burst), held: held)
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

    /// A server that ends a connection after so many requests (nginx's keepalive_requests)
    /// ends a burst's with a GOAWAY mid-burst: the rest of the burst goes on a connection
    /// notifyd opened beforehand, with nothing sent on it, instead of waiting for a new one's
    /// handshakes; each recipient's messages still in order, each delivered once.
    @Test(.enabled(if: HTTP2FrontEnd.shouldRun, Comment(rawValue: HTTP2FrontEnd.skipReason)))
    func aBurstTheServerEndsMidwayGoesOnAConnectionAlreadyOpen() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        let backendPort = try backend.start()
        defer { backend.stop() }
        let frontEnd = try await HTTP2FrontEnd(backendPort: backendPort, requestsPerConnection: 12)
        let daemon = try await DaemonUnderTest(backend: frontEnd.url, stateDirectory: frontEnd.directory.file("state"),
                                               launcher: frontEnd.trustingLauncher)
        // The login and registration went over HTTP/2: notifyd knows the backend multiplexes.
        try await daemon.logIn("alice")
        let before = frontEnd.requests().count
        let acceptedBefore = try #require(frontEnd.acceptedConnections(), "nginx's stub_status")
        // Each send held at the backend: every round of the burst takes that long, and a
        // connection opened at the start has been open that long when the GOAWAY comes.
        let held = 0.8
        try backend.addFault(.init(route: .send, delay: held))

        let recipients = 6, perRecipient = 5
        let count = recipients * perRecipient
        let lines = (0..<count).map { #"{"id":\#($0),"cmd":"send","to":"user\#($0 % recipients)","message":"message \#($0)"}"# }
        let replies = try await daemon.exchange(lines)
        #expect(replies.count == count && replies.allSatisfy { $0.contains(#""state":"delivered""#) },
                "\(replies.filter { !$0.contains(#""state":"delivered""#) })")

        let logged = Array(frontEnd.requests().dropFirst(before))
        let sends = logged.filter { $0.target.hasPrefix("/api/notifications") }
        #expect(sends.count == count && sends.allSatisfy { $0.httpVersion == "HTTP/2.0" && $0.status == 200 }, "\(sends)")
        #expect(!logged.contains { $0.target == "/" }, "a standby connection carries no request of its own: \(logged)")
        let connections = sends.map(\.connection).reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
        #expect(connections.count >= 2, "nginx ended the burst's first connection after 12 requests: \(sends)")
        // The connections after the first were there before their first request: opened
        // ahead, not when the GOAWAY came (then the request arrives within a handshake).
        for connection in connections.dropFirst() {
            guard let first = sends.first(where: { $0.connection == connection && $0.number == 1 }) else {
                Issue.record("connection \(connection) carried the burst from its first request: \(sends)")
                continue
            }
            #expect(first.start - first.connectionOpened >= held / 2,
                    "connection \(connection) open \(first.start - first.connectionOpened) s before its first request: \(sends)")
        }
        // One standby at a time: what is left open is the connection in use and at most one
        // more (none where nginx ended the last one as the burst ended), not one opened at
        // every turn of the burst.
        let open = frontEnd.clientConnections()
        #expect(open <= 2, "\(open) connections to nginx left open")
        // And none opened and closed meanwhile: the burst's connections after the first, each
        // once a standby, and at most one standby more that the burst did not need. Less the
        // status page's own connection.
        let accepted = try #require(frontEnd.acceptedConnections()) - acceptedBefore - 1
        #expect(accepted <= connections.count, "\(accepted) connections accepted for a burst that went on \(connections.count)")
        let pushes = backend.pushes()
        for recipient in 0..<recipients {
            let payloads = pushes.filter { $0.toTag == "user\(recipient)" }.map(\.payload)
            let expected = (0..<perRecipient).map { "message \(recipient + $0 * recipients)" }
            #expect(payloads.count == expected.count && zip(payloads, expected).allSatisfy { $0.contains($1) }, "user\(recipient): \(payloads)")
        }
        await daemon.cleanUp()
        try await offThePool { frontEnd.stop() }
    }
}
