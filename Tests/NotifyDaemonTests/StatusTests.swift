import DevBackend
import Foundation
@testable import NotifyCore
@testable import NotifyDaemon
import NotifyProtocol
import Testing
import NotifyTestSupport

/// `status` made on the socket loop from the parts their owners publish (`StatusPart`):
/// each check below asks twice before a change, makes the change, and asks again; a part
/// not published with its change would show the old value.
@Suite(.stopsFixtures) struct StatusTests {
    /// Asks twice: nothing changed in between, so the two must agree.
    static func status(_ fixture: DaemonFixture) async throws -> StatusResult {
        let first = try await fixture.status()
        let second = try await fixture.status()
        #expect(first == second, "nothing changed between two asks")
        return second
    }

    @Test func everyChangeShowsInTheNextStatus() async throws {
        // Retries far apart, so nothing changes in the background between two asks.
        let fixture = try await DaemonFixture(settings: .fast { $0.retry = Backoff(initial: 600, multiplier: 2, maximum: 600) }, checkingStatusParts: false)
        #expect(try await Self.status(fixture).account == nil)
        _ = try await fixture.login()
        #expect(try await Self.status(fixture).account?.user == "alice")
        _ = try await fixture.call(SetTokenCommand(token: "ABCDEF0123", wait: true))
        #expect(try await Self.status(fixture).registration.registered?.handle == "ABCDEF0123")
        _ = try await fixture.call(SetTagsCommand(tags: ["team-blue"], wait: true))
        #expect(try await Self.status(fixture).device.tags.contains("team-blue"))

        // A send meets an outage and waits for its retry; then it goes out in the background.
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        _ = try await fixture.call(SendCommand(to: "bob", message: "later"))
        #expect(try await Self.status(fixture).outbox?.waiting == 1)
        _ = try await fixture.call(OutboxRetryCommand(delivery: nil))
        #expect(await eventually { (try? await fixture.status().outbox?.waiting) == 0 })

        _ = try await fixture.call(UnregisterCommand())
        #expect(try await Self.status(fixture).registration.state == .unregistered)
        _ = try await fixture.call(LogoutCommand(force: true))
        #expect(try await Self.status(fixture).account == nil)
    }

    @Test func aPasswordSourceThatFailsShowsInTheNextStatus() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = .command("exit 3") }, checkingStatusParts: false)
        #expect(try await Self.status(fixture).account == nil)
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        _ = try await fixture.call(LoginCommand(user: "alice", password: nil))
        #expect(try await fixture.status().account?.passwordProblem?.contains("exit status 3") == true)
    }

    /// Requests on one connection take effect in order: a `status` sent right behind a
    /// change, before its reply, reports the change.
    @Test func aStatusPipelinedBehindAChangeReportsIt() async throws {
        let fixture = try await DaemonFixture(checkingStatusParts: false)
        _ = try await fixture.login()
        _ = try await fixture.call(SetTokenCommand(token: "ABCDEF0123", wait: true))
        _ = try await Self.status(fixture)
        let connection = try RawConnection(path: fixture.socketPath)
        try connection.send(#"{"cmd":"set-tags","tags":["pipelined"]}"# + "\n" + #"{"cmd":"status","id":2}"# + "\n")
        let replies = try await onThread { [connection.receive(), connection.receive()] }
        #expect(replies[1]?["id"] == .number(2))
        guard case .object(let result)? = replies[1]?["result"], case .object(let device)? = result["device"] else {
            Issue.record("no device in \(String(describing: replies[1]))")
            return
        }
        #expect(device["tags"] == .array([.string("pipelined")]))
    }

    /// The answers made on the loop echo the id however its key is written.
    @Test(arguments: ["ping", "status"])
    func anIdWhoseKeyIsEscapedIsEchoed(command: String) async throws {
        let fixture = try await DaemonFixture(checkingStatusParts: false)
        _ = try await Self.status(fixture)
        let connection = try RawConnection(path: fixture.socketPath)
        try connection.send(#"{"cmd":"\#(command)","\u0069d":7}"# + "\n")
        let reply = try await onThread { connection.receive() }
        #expect(reply?["ok"] == .bool(true))
        #expect(reply?["id"] == .number(7), "\(String(describing: reply))")
    }
}
