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
        try await Task.sleep(for: .milliseconds(200))
        #expect(backend.pushes().filter(\.valid).map(\.displayedText) == (1...3).map { "From alice: message \($0)" })
        let empty = try await second.notifyctl(["outbox"])
        #expect(empty.output.contains("The outbox is empty"))
        await second.cleanUp()
        await first.cleanUp()
    }

    @Test func nothingAcceptedIsLostWhenTheDaemonIsKilledMidStream() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let flags = ["--retry-min", "0.05s", "--retry-max", "0.2s"]
        let first = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags)
        _ = try await first.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice".utf8))
        // A slow backend keeps messages in flight and in the outbox when the kill lands.
        try backend.addFault(.init(route: .send, delay: 0.05))

        let killer = Task {
            try? await Task.sleep(for: .milliseconds(400))
            first.child.signal(SIGKILL)
        }
        var accepted: [String] = []
        for index in 1...40 {
            let text = "stream \(index)"
            guard let sent = try? await first.notifyctl(["send", "--to", "bob", text], seconds: 10) else { break }
            if sent.status == 0 || sent.status == 4 { accepted.append(text) }
            if sent.status == 3 { break }
        }
        await killer.value
        _ = await first.child.wait(seconds: 5)
        #expect(!accepted.isEmpty)

        backend.clearFaults()
        let second = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: flags, stateDirectory: first.stateDirectory)
        let delivered = { Set(backend.pushes().filter(\.valid).compactMap(\.displayedText)) }
        let expected = Set(accepted.map { "From alice: \($0)" })
        #expect(await eventually(20) { expected.isSubset(of: delivered()) }, "accepted but never delivered: \(expected.subtracting(delivered()))")
        await second.cleanUp()
        await first.cleanUp()
    }
}
