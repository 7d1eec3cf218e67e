import Foundation
@testable import NotifyDaemon
import NotifyProtocol
import NotifySocket
import Testing

/// Refused connections are logged at a bounded rate, and every one of them is counted.
@Suite struct RefusalLogTests {
    @Test func theFirstIsSaidAtOnceTheRestOncePerInterval() {
        var log = RefusalLog(interval: 10)
        #expect(log.refused("from uid 7", because: "not ours", now: 100) == "refused a connection from uid 7: not ours")
        #expect(log.nextDeadline == nil, "nothing waits to be said: no wake-up")
        for second in 0..<500 { #expect(log.refused("from uid 7", because: "not ours", now: 100 + Double(second) / 100) == nil) }
        #expect(log.nextDeadline == 110)
        #expect(log.due(now: 109.9).isEmpty)
        #expect(log.due(now: 110) == ["refused 500 more connections from uid 7 in the last 10 s"])
        #expect(log.nextDeadline == nil)
        #expect(log.due(now: 200).isEmpty)
        // Quiet for an interval: the next one is said at once again.
        #expect(log.refused("from uid 7", because: "not ours", now: 300) != nil)
    }

    @Test func kindsAreCountedApartAndAllSaidAtShutdown() {
        var log = RefusalLog(interval: 10)
        _ = log.refused("from uid 7", because: "a", now: 0)
        _ = log.refused("beyond the limit", because: "b", now: 0)
        for _ in 0..<3 { _ = log.refused("from uid 7", because: "a", now: 1) }
        _ = log.refused("beyond the limit", because: "b", now: 2)
        #expect(log.due(now: 3, flushAll: true) == [
            "refused 1 more connection beyond the limit in the last 3 s",
            "refused 3 more connections from uid 7 in the last 3 s",
        ])
    }

    /// A count still unsaid when the interval has passed goes with the next refusal's line
    /// if that comes first.
    @Test func aLateCountRidesOnTheNextLine() {
        var log = RefusalLog(interval: 10)
        _ = log.refused("from uid 7", because: "a", now: 0)
        _ = log.refused("from uid 7", because: "a", now: 5)
        #expect(log.refused("from uid 7", because: "a", now: 12) == "refused a connection from uid 7: a (1 more refused before it)")
    }

    /// 200 connections beyond the limit: each gets its error line, the log gets two lines,
    /// and their counts add up to 200.
    @Test func aFloodOfConnectionsBeyondTheLimitLogsTwoLines() async throws {
        var limits = ServerLimits()
        limits.maximumConnections = 2
        limits.shutdownGrace = 0.5
        let server = try await ServerUnderTest.with(limits) { server in
            let open = try (1...2).map { _ in try RawConnection(path: server.socketPath) }
            for connection in open {
                try connection.send("ping\n")
                #expect(try await onThread { connection.receive() }?["echo"] == .string("ping"))
            }
            let path = server.socketPath
            let refusals = try await onThread {
                try (1...200).filter { _ in try RawConnection(path: path).receive()?["error"]?["code"] == .string("too_many_connections") }.count
            }
            #expect(refusals == 200)
            return server
        }
        // Stopped: the count still unsaid was said at shutdown.
        let lines = server.log.split(separator: "\n").filter { $0.contains("refused") }
        #expect(lines.count == 2, "\(lines)")
        let counted = lines.reduce(0) { total, line in
            if line.contains("refused a connection beyond the limit") { return total + 1 }
            let words = line.split(separator: " ")
            return total + (words.firstIndex(of: "refused").flatMap { Int(words[$0 + 1]) } ?? 0)
        }
        #expect(counted == 200)
    }
}
