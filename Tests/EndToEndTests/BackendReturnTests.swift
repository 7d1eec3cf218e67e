import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd and a dev backend that goes away and comes back on the same port
/// while nothing else talks to it: the message queued meanwhile goes out once the backend
/// is back, seen by the probe, not at the end of a backoff.
@Suite struct BackendReturnTests {
    @Test func aMessageQueuedWhileTheBackendWasDownGoesOnceItIsBackWithNoOtherTraffic() async throws {
        let first = DevBackendServer(options: .init(quiet: true))
        let port = try first.start()
        let url = first.baseURL.absoluteString
        // The first retry at least 2.5 min away: only the probe can send it within this test.
        let daemon = try await DaemonUnderTest(backend: url, extraArguments: ["--retry-min", "5m"])
        try await daemon.logIn("alice")
        try await offThePool { first.stop() }
        let held = try await HeldPort.hold(port)

        let send = try await daemon.notifyctl(["send", "--to", "bob", "sent while the backend was down"])
        #expect(send.status == 4, "accepted and queued: \(send.output)\(send.error)")
        #expect((send.output + send.error).contains("connection refused"), "\(send.output)\(send.error)")
        let down = try await daemon.notifyctl(["status"])
        #expect(down.output.contains("unreachable since"), "\(down.output)")
        #expect(down.output.contains("checking every"), "\(down.output)")
        let json = try await daemon.notifyctl(["status", "--json"])
        #expect(json.output.contains("\"backend_unreachable_since\""), "\(json.output)")

        // A probe has found the backend still down (its interval grew from the first 2 s):
        // what brings the message out below is a later probe, not the first one.
        let probedWhileDown = await eventually(30) {
            (try? await daemon.notifyctl(["status"]))?.output.contains("checking every 4 s") == true
        }
        #expect(probedWhileDown, "no probe failed while the backend was down")
        let second = DevBackendServer(options: .init(port: port, quiet: true))
        held.release()
        _ = try second.start()
        defer { second.stop() }
        // A request is logged once answered, after the push it made: both are waited for.
        #expect(await eventually(60) { second.pushes().count == 1 && second.requestCount(route: .send) >= 1 }, "delivered once the backend was back")
        #expect(second.requestCount(route: .send) == 1, "one request: the delivery; the probe sends none")
        let up = try await daemon.notifyctl(["status"])
        #expect(!up.output.contains("unreachable since"), "\(up.output)")
        #expect(up.output.contains("outbox:       empty") || !up.output.contains("queued"), "\(up.output)")
        await daemon.cleanUp()
    }

    /// A backend that answers 503 is up and asked for less: no probe, no extra request.
    @Test func aBackendAnswering503IsNotProbed() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--retry-min", "5m"])
        try await daemon.logIn("alice")
        try backend.addFault(.init(route: .send, status: 503))
        let send = try await daemon.notifyctl(["send", "--to", "bob", "hello"])
        #expect(send.status == 4, "\(send.output)\(send.error)")
        // The answer is judged before its sender hears it, and that is where a watch, the
        // only thing that probes, would begin: the status after the reply shows none.
        let status = try await daemon.notifyctl(["status"])
        #expect(!status.output.contains("unreachable since"), "\(status.output)")
        let json = try await daemon.notifyctl(["status", "--json"])
        #expect(!json.output.contains("\"checking_every\""), "no probe: \(json.output)")
        #expect(backend.requestCount(route: .send) == 1)
        await daemon.cleanUp()
    }
}
