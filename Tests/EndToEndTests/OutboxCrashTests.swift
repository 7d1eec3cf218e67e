import DevBackend
import Foundation
import Testing
import NotifyTestSupport

/// What `send` accepted survives the daemon being killed outright.
@Suite struct OutboxCrashTests {
    @Test func queuedMessagesSurviveSIGKILLAndAreDeliveredAfterRestart() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        try backend.addFault(.init(route: .send, status: 503))
        let flags = ["--retry-min", "0.05s", "--retry-max", "0.2s"]
        let first = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags)
        _ = try await first.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice".utf8))
        for index in 1...3 {
            let sent = try await first.notifyctl(["send", "--to", "bob", "message \(index)"])
            #expect(sent.status == 4, "queued: \(sent.output)\(sent.error)")
            #expect(sent.output.contains("queued for bob"))
        }
        let listed = try await first.notifyctl(["outbox"])
        #expect(listed.output.contains("message 1"))

        first.child.signal(SIGKILL)
        _ = await first.child.wait(seconds: 5)
        backend.clearFaults()

        let second = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags, stateDirectory: first.stateDirectory)
        #expect(await eventually { backend.pushes().filter(\.valid).count >= 3 })
        // Messages to one recipient go out in order: one sent twice would come before this one.
        let after = try await second.notifyctl(["send", "--to", "bob", "message 4"])
        #expect(after.status == 0, "delivered: \(after.output)\(after.error)")
        #expect(backend.pushes().filter(\.valid).map(\.displayedText) == (1...4).map { "From alice: message \($0)" })
        let empty = try await second.notifyctl(["outbox"])
        #expect(empty.output.contains("The outbox is empty"))
        await second.cleanUp()
        await first.cleanUp()
    }

    /// The backend took a send but its reply was lost, and notifyd was killed before the
    /// retry: the restarted notifyd sends it with the Idempotency-Key it was first sent
    /// with, read back from its file, and the backend, which keeps keys, pushes it once.
    @Test func aSendRetriedAfterARestartCarriesTheKeyItWasFirstSentWith() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let flags = ["--retry-min", "1h", "--retry-max", "1h"]
        let first = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags)
        try await first.logIn("alice")
        // Taken, its reply lost; then refused for now, so that it waits for the retry.
        try backend.addFault(.init(route: .send, count: 1, loseReply: true))
        try backend.addFault(.init(route: .send, status: 503))
        let sent = try await first.notifyctl(["send", "--to", "bob", "exactly once"])
        #expect(sent.status == 4, "queued: \(sent.output)\(sent.error)")
        #expect(backend.pushes().count == 1, "the backend took it the first time")

        first.child.signal(SIGKILL)
        _ = await first.child.wait(seconds: 5)
        backend.clearFaults()
        let sends = backend.requestCount(route: .send)
        let second = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags, stateDirectory: first.stateDirectory)
        let retry = try await second.notifyctl(["outbox", "retry"])
        #expect(retry.status == 0, "\(retry.output)\(retry.error)")
        #expect(await eventually { (try? await second.notifyctl(["outbox"]).output.contains("The outbox is empty")) == true })
        #expect(backend.requestCount(route: .send) == sends + 1, "sent again after the restart")
        #expect(backend.pushes().count == 1, "and not pushed again: the same key")
        await second.cleanUp()
        await first.cleanUp()
    }

    /// `outbox_max` as a user meets it: `send` exits 1 saying the outbox is full, `status`
    /// warns once it nears the bound, and what was queued stays queued across a restart.
    @Test func aFullOutboxRefusesTheSendAndStatusWarnsBeforeIt() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        try backend.addFault(.init(route: .send, status: 503))
        let environment = ["NOTIFYD_OUTBOX_MAX": "5"]
        let flags = ["--retry-min", "1h", "--retry-max", "1h"]
        let first = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags, environment: environment)
        try await first.logIn("alice")
        for index in 1...3 { #expect(try await first.notifyctl(["send", "--to", "bob", "message \(index)"]).status == 4) }
        #expect(!(try await first.notifyctl(["status"]).output.contains("outbox_max")), "3 of 5: no warning yet")
        #expect(try await first.notifyctl(["send", "--to", "bob", "message 4"]).status == 4)
        let near = try await first.notifyctl(["status"])
        #expect(near.output.contains("nearly full: 4 of outbox_max 5 queued"), "\(near.output)")
        #expect(try await first.notifyctl(["send", "--to", "bob", "message 5"]).status == 4)
        let full = try await first.notifyctl(["send", "--to", "carol", "message 6"])
        #expect(full.status == 1, "\(full.output)\(full.error)")
        #expect(full.error.contains("the outbox is full: 5 messages waiting for bob (5) (outbox_max = 5)"), "\(full.error)")

        #expect(await first.stop() == 0)
        let second = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags, stateDirectory: first.stateDirectory,
                                               environment: environment)
        let again = try await second.notifyctl(["send", "--to", "carol", "message 6"])
        #expect(again.status == 1 && again.error.contains("the outbox is full"), "still full after a restart: \(again.error)")
        #expect(try await second.notifyctl(["--json", "outbox"]).output.components(separatedBy: "\"state\":\"queued\"").count - 1 == 5)
        // Listed by pages, with a line for the recipient.
        let page = try await second.notifyctl(["outbox", "--limit", "2"])
        #expect(page.output.contains("bob: 5 waiting; oldest "), "\(page.output)")
        #expect(page.output.components(separatedBy: "\n  ").count - 1 == 2, "two messages: \(page.output)")
        #expect(page.output.contains("5 in all: `notifyctl outbox --after "), "\(page.output)")
        let all = try await second.notifyctl(["outbox", "--all"])
        #expect(all.output.components(separatedBy: "\n  ").count - 1 == 5 && !all.output.contains("bob: 5 waiting"), "\(all.output)")
        await second.cleanUp()
        await first.cleanUp()
    }

    /// contrib/tests/crash-loop, shortened: kill -9 at random moments while messages are
    /// queued behind a failing backend (503, dropped connections), in flight to a slow one
    /// or delivered, and while the token changes; after each restart every message that
    /// was answered "delivered" or "queued" must reach the backend and the registration
    /// must be restored.
    @Test(.enabled(if: ContribTool.python3.shouldRun, "needs python3 (Debian package python3)"))
    func nothingAcknowledgedIsLostAcrossRandomKills() async throws {
        let python = try ContribTool.python3.require()
        let script = Contrib.path("tests/crash-loop")
        let result = try await run(python, [script, "--trials", "12", "--bin", BuiltProducts.directory.path, "--deadline", "240"], seconds: 300)
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("no acknowledged message lost"), "\(result.output)")
        // Most trials fail the backend, so acknowledged messages wait in the outbox when the kill lands.
        let queued = result.output.firstMatch(of: /accepted: \d+ \((\d+) of them queued\)/).flatMap { Int($0.1) } ?? 0
        #expect(queued > 0, "\(result.output)")
    }
}
