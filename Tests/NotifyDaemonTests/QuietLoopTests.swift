import Foundation
@testable import NotifyDaemon
import NotifyTestSupport
import Testing

/// The loop's "quiet" moment, when the daemon gives memory back: only after a quiet
/// period with no activity, never while idle. The checks compare moments, not durations,
/// so a loaded machine that stretches the gaps between requests cannot fail them.
@Suite struct QuietLoopTests {
    static let period = 0.3
    static let limits = SocketServerTests.limits { $0.quietPeriod = period }

    @Test func calledOnlyAfterAQuietPeriodAndNeverWhileIdle() async throws {
        try await ServerUnderTest.with(Self.limits) { server in
            // Idle for longer than a quiet period before anything happens: the scenario. A call
            // while idle would come before the first request (once that is seen, the loop is
            // no longer idle), so the check below, against that request, does not depend on
            // how long this took.
            try await Task.sleep(for: .seconds(2 * Self.period))

            // A burst longer than the quiet period, its requests closer together than it.
            let connection = try RawConnection(path: server.socketPath)
            var sent: [ContinuousClock.Instant] = []
            for request in 1...8 {
                sent.append(.now)
                try connection.send("echo \(request)\n")
                _ = try await onThread { connection.receive() }
                try await Task.sleep(for: .seconds(Self.period / 3))
            }
            // Every reply is in, so the loop has nothing left to do but the one call that ends
            // the burst (a slow machine may have made earlier gaps quiet too).
            let replied = ContinuousClock.now
            let lastSent = try #require(sent.last)
            #expect(await eventually { server.quietMoments.contains { $0 > lastSent } })

            // Idle again, for longer than a quiet period: the scenario again. Calls while idle
            // would come before the one the next request brings, a quiet period after it.
            try await Task.sleep(for: .seconds(4 * Self.period))
            let again = ContinuousClock.now
            sent.append(again)
            try connection.send("echo again\n")
            _ = try await onThread { connection.receive() }
            #expect(await eventually { server.quietMoments.contains { $0 > again } })
            let moments = server.quietMoments
            // Each call came at least a quiet period after the last request before it: the
            // loop saw that request no earlier than it was sent.
            for moment in moments {
                let last = try #require(sent.last { $0 < moment }, "called while idle, before any request")
                #expect(moment - last >= .seconds(Self.period), "called \(moment - last) after a request")
            }
            // Between the burst's last reply and the next request, only the call that ends the burst.
            let whileIdle = moments.filter { $0 > replied && $0 < again }.count
            #expect(whileIdle <= 1, "called \(whileIdle) times while idle")
        }
    }

    @Test func workEndedElsewhereCountsAsActivity() async throws {
        try await ServerUnderTest.with(Self.limits) { server in
            let noted = ContinuousClock.now
            server.server.noteActivity()
            #expect(await eventually { !server.quietMoments.isEmpty })
            #expect(server.quietMoments.count == 1)
            let quiet = try #require(server.quietMoments.first)
            #expect(quiet - noted >= .seconds(Self.period))
        }
    }
}
