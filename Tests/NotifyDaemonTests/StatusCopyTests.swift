import DevBackend
import Foundation
@testable import NotifyCore
@testable import NotifyDaemon
import NotifyProtocol
import Testing
import NotifyTestSupport

/// `status` answered from a copy on the socket loop: only while nothing it reports has
/// changed. Each check below asks twice before a change (the second answer comes from
/// the copy), makes the change, and asks again: a change the copy missed would show the
/// old value.
@Suite(.stopsFixtures) struct StatusCopyTests {
    @Test func aCopyServesOnlyWhileNothingChanged() {
        let changes = StatusChanges()
        let copy = StatusCopy(changes: changes)
        #expect(copy.current == nil)
        let made = copy.changesNow
        copy.keep([1], madeAt: made)
        #expect(copy.current == [1])
        changes.bump()
        #expect(copy.current == nil)
        copy.keep([2], madeAt: changes.value)
        // A slower answer, made before the change, arrives last: it is not kept.
        copy.keep([1], madeAt: made)
        #expect(copy.current == [2])
    }

    /// The tests' daemons make every status afresh and compare it with the copy kept at the
    /// same count: a copy that would have been answered stale is an error in the log.
    @Test func aCopyThatWouldHaveBeenStaleIsLogged() {
        let changes = StatusChanges()
        let lines = LogCapture()
        let copy = StatusCopy(changes: changes, verifyingWith: Logger(level: .debug) { level, message in lines.append("\(level.name): \(message)") })
        copy.keep(Array(#"{"user":"alice"}"#.utf8), madeAt: changes.value)
        #expect(copy.current == nil, "while verifying, nothing is answered from the copy")
        // Made afresh at the same count: the same, or a change that did not count itself.
        copy.verify(Array(#"{"user":"alice"}"#.utf8), madeAt: changes.value)
        #expect(!lines.text.contains(StatusCopy.staleMessage))
        copy.verify(Array(#"{"user":"bob"}"#.utf8), madeAt: changes.value)
        #expect(lines.text.contains(StatusCopy.staleMessage))
        // A change that counted itself meanwhile is no sign of one that did not.
        let before = changes.value
        changes.bump()
        copy.verify(Array(#"{"user":"carol"}"#.utf8), madeAt: before)
        #expect(lines.text.components(separatedBy: StatusCopy.staleMessage).count == 2)
    }

    /// Asks twice, so that the second answer comes from the copy if one is kept.
    static func status(_ fixture: DaemonFixture) async throws -> StatusResult {
        let first = try await fixture.status()
        let second = try await fixture.status()
        #expect(first == second, "nothing changed between two asks")
        return second
    }

    @Test func everyChangeShowsInTheNextStatus() async throws {
        // Retries far apart, so nothing changes in the background between two asks.
        let fixture = try await DaemonFixture(settings: .fast { $0.retry = Backoff(initial: 600, multiplier: 2, maximum: 600) }, verifyingStatusCopy: false)
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
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = .command("exit 3") }, verifyingStatusCopy: false)
        #expect(try await Self.status(fixture).account == nil)
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        _ = try await fixture.call(LoginCommand(user: "alice", password: nil))
        #expect(try await fixture.status().account?.passwordProblem?.contains("exit status 3") == true)
    }

    /// Requests on one connection take effect in order: a `status` sent right behind a
    /// change, before its reply, reports the change.
    @Test func aStatusPipelinedBehindAChangeReportsIt() async throws {
        let fixture = try await DaemonFixture(verifyingStatusCopy: false)
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
        let fixture = try await DaemonFixture(verifyingStatusCopy: false)
        _ = try await Self.status(fixture)
        let connection = try RawConnection(path: fixture.socketPath)
        try connection.send(#"{"cmd":"\#(command)","\u0069d":7}"# + "\n")
        let reply = try await onThread { connection.receive() }
        #expect(reply?["ok"] == .bool(true))
        #expect(reply?["id"] == .number(7), "\(String(describing: reply))")
    }
}
