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
}
