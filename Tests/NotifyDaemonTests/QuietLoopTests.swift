import Foundation
@testable import NotifyDaemon
import NotifyTestSupport
import Testing

/// The loop's "quiet" moment, when the daemon gives memory back: once after each burst
/// of activity, never while a burst goes on, never while idle.
@Suite struct QuietLoopTests {
    static let limits = SocketServerTests.limits { $0.quietPeriod = 0.5 }

    @Test func oneCallAfterEachBurstAndNoneWhileIdle() async throws {
        try await ServerUnderTest.with(Self.limits) { server in
            try await Task.sleep(for: .milliseconds(800))
            #expect(server.timesQuiet == 0, "nothing happened yet")

            let connection = try RawConnection(path: server.socketPath)
            // Requests closer together than the quiet period keep it from coming, even
            // when the burst lasts longer than that period.
            for request in 1...8 {
                try connection.send("echo \(request)\n")
                _ = try await onThread { connection.receive() }
                #expect(server.timesQuiet == 0, "quiet in the middle of a burst, after request \(request)")
                try await Task.sleep(for: .milliseconds(150))
            }
            #expect(await eventually { server.timesQuiet == 1 })
            try await Task.sleep(for: .milliseconds(1200))
            #expect(server.timesQuiet == 1, "called again while idle")

            try connection.send("echo again\n")
            _ = try await onThread { connection.receive() }
            #expect(await eventually { server.timesQuiet == 2 })
        }
    }
}
