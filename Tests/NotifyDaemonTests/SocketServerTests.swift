import Foundation
@testable import NotifyDaemon
import NotifyProtocol
import NotifySocket
import NotifyTestSupport
import Testing

/// The event loop at each of its limits: one client never slows, stalls or floods another.
@Suite struct SocketServerTests {
    static func limits(_ change: (inout ServerLimits) -> Void = { _ in }) -> ServerLimits {
        var limits = ServerLimits()
        limits.shutdownGrace = 0.5
        change(&limits)
        return limits
    }

    @Test func repliesKeepRequestOrderWhileTheWaitingOverlaps() async throws {
        try await ServerUnderTest.with(Self.limits()) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send("hold 1\na\n\n  \nb")
            // Both complete lines ran although the first has no answer yet; blank lines are skipped.
            #expect(await eventually { server.handler.handled == 2 })
            server.handler.release()
            let replies = try await onThread { [connection.receive(), connection.receive()] }
            #expect(replies[0]?["held"] == .string("hold 1"))
            #expect(replies[1]?["echo"] == .string("a"))
            // The last line had no newline: it is answered once the client closes its side.
            shutdown(connection.fd, Int32(SHUT_WR))
            let last = try await onThread { (connection.receive(), connection.receive()) }
            #expect(last.0?["echo"] == .string("b"))
            #expect(last.1 == nil, "closed once everything is answered")
        }
    }

    /// Replies made at once can fill the output past its high-water mark in the middle of
    /// what was read; once the client has taken them, the lines still unread in the
    /// buffer are answered too, though no more bytes arrive to wake the loop.
    @Test func linesLeftInTheBufferAtTheHighWaterMarkAreAnsweredOnceItDrains() async throws {
        try await ServerUnderTest.with(Self.limits { $0.outputHighWater = 4096 }) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send((1...50).map { "now big \($0)\n" }.joined())
            // Stops at the first reply that does not come (the socket's 10 s timeout).
            let answered = try await onThread { () -> Int in
                var count = 0
                while count < 50, connection.receive() != nil { count += 1 }
                return count
            }
            #expect(answered == 50, "\(answered) of 50 answered")
        }
    }

    /// A reply made at once on the loop waits its turn behind replies still owed.
    @Test func immediateRepliesKeepTheirPlaceInTheOrder() async throws {
        try await ServerUnderTest.with(Self.limits()) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send("now 1\nhold 2\nnow 3\necho 4\nnow 5\n")
            #expect(await eventually { server.handler.handled == 2 }, "hold and echo went to the handler, the others did not")
            server.handler.release()
            let replies = try await onThread { (1...5).map { _ in connection.receive() } }
            #expect(replies[0]?["now"] == .string("now 1"))
            #expect(replies[1]?["held"] == .string("hold 2"))
            #expect(replies[2]?["now"] == .string("now 3"))
            #expect(replies[3]?["echo"] == .string("echo 4"))
            #expect(replies[4]?["now"] == .string("now 5"))
            #expect(server.handler.handled == 2)
        }
    }

    @Test func aClientThatNeverReadsIsPausedThenClosedAndOthersAreServed() async throws {
        let limits = Self.limits { $0.outputHighWater = 64 * 1024; $0.maximumRequestsInFlight = 8; $0.drainTimeout = 0.5 }
        try await ServerUnderTest.with(limits) { server in
            // Two clients ask for 64 KiB replies as fast as they can and never read.
            let stubborn = try [StubbornClient(path: server.socketPath), StubbornClient(path: server.socketPath)]
            let written = try await onThread { stubborn.map { $0.writeUntilBlocked("big\n", atMost: 2_000_000) } }
            #expect(written.allSatisfy { $0 < 2_000_000 }, "notifyd stopped reading them: \(written)")
            // Their replies in memory are bounded: a few rounds of the in-flight limit ran, no more.
            #expect(server.handler.handled <= 2 * 3 * 8, "ran \(server.handler.handled) requests")
            // Meanwhile another client is answered.
            let other = try RawConnection(path: server.socketPath)
            try other.send("ping\n")
            #expect(try await onThread { other.receive() }?["echo"] == .string("ping"))
            // They are closed once they have taken nothing for the drain timeout, with a log line.
            #expect(await eventually { server.log.components(separatedBy: "read none of its").count == 3 })
            try other.send("still here\n")
            #expect(try await onThread { other.receive() }?["echo"] == .string("still here"))
        }
    }

    @Test func aSlowReaderThatKeepsReadingIsNotClosed() async throws {
        let limits = Self.limits { $0.outputHighWater = 64 * 1024; $0.drainTimeout = 5 }
        try await ServerUnderTest.with(limits) { server in
            let connection = try RawConnection(path: server.socketPath)
            let count = 40
            try connection.send(String(repeating: "big\n", count: count))
            let received = try await onThread { () -> Int in
                var received = 0
                while received < count, connection.receive()?["big"] != nil {
                    received += 1
                    usleep(20_000)
                }
                return received
            }
            #expect(received == count)
            #expect(!server.log.contains("read none of its"))
        }
    }

    @Test func requestsInFlightStopAtTheLimit() async throws {
        try await ServerUnderTest.with(Self.limits { $0.maximumRequestsInFlight = 4 }) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send((1...10).map { "hold \($0)\n" }.joined())
            #expect(await eventually { server.handler.held == 4 }, "\(server.handler.handled) handled, \(server.handler.held) held")
            // Another connection is not held back by this one's limit.
            let other = try RawConnection(path: server.socketPath)
            try other.send("ping\n")
            #expect(try await onThread { other.receive() }?["echo"] == .string("ping"))
            #expect(server.handler.handled == 5, "4 held requests and the other connection's ping")
            server.handler.release()
            let replies = try await onThread { (1...10).map { _ in connection.receive()?["held"]?.stringValue } }
            #expect(replies == (1...10).map { "hold \($0)" })
            #expect(server.handler.mostHeldAtOnce == 4)
        }
    }

    /// The requests of one read are all handled, in order, before any of their waits
    /// starts: the sends among them are then written to disk together.
    @Test func theRequestsOfOneReadAreHandledBeforeTheirWaitsStart() async throws {
        try await ServerUnderTest.with(Self.limits()) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send("hand 1\nhand 2\nhand 3\n")
            // Patient: each hand-over goes through the concurrency pool, which the other tests share.
            #expect(await eventually(60) { server.handler.held == 3 })
            #expect(Array(server.handler.steps.prefix(3)) == ["handled hand 1", "handled hand 2", "handled hand 3"], "\(server.handler.steps)")
            server.handler.release()
            let replies = try await onThread { (1...3).map { _ in connection.receive()?["held"]?.stringValue } }
            #expect(replies == ["hand 1", "hand 2", "hand 3"])
        }
    }

    /// A request that is not a send may wait in its handling (a logout, for the backend):
    /// the waits of the sends read before it start first, not after it.
    @Test func theWaitsBeforeARequestThatIsNotASendStartBeforeIt() async throws {
        try await ServerUnderTest.with(Self.limits()) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send("hand 1\nhand 2\nuntil-held 2\n")
            #expect(await eventually(60) { server.handler.held == 2 })
            server.handler.release()
            let replies = try await onThread { (1...3).map { _ in connection.receive() } }
            #expect(replies[2]?["until-held"] == .string("seen"), "the holds were waiting while it was handled")
        }
    }

    /// At the bound, reading waits until half of the requests in flight are answered: a
    /// client pipelining more than the bound has its next requests started together, not
    /// one each time a reply goes out (for sends, a group commit and its fsyncs each).
    @Test func atTheLimitReadingResumesOnceHalfAreAnswered() async throws {
        try await ServerUnderTest.with(Self.limits { $0.maximumRequestsInFlight = 8 }) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send((1...20).map { "hold \($0)\n" }.joined())
            #expect(await eventually { server.handler.held == 8 }, "\(server.handler.handled) handled, \(server.handler.held) held")
            for expected in 1...4 {
                server.handler.release("hold \(expected)")
                #expect(try await onThread { connection.receive() }?["held"] == .string("hold \(expected)"))
            }
            #expect(await eventually { server.handler.held == 8 }, "\(server.handler.handled) handled, \(server.handler.held) held")
            let arrivals = server.handler.arrivals
            #expect(Array(arrivals.prefix(8)) == Array(repeating: 0, count: 8))
            #expect(Array(arrivals.dropFirst(8)) == [4, 4, 4, 4], "requests 9 to 12 were taken only once 4 of the 8 were answered")
            server.handler.release()
            let rest = try await onThread { (5...20).map { _ in connection.receive()?["held"]?.stringValue } }
            #expect(rest == (5...20).map { "hold \($0)" })
        }
    }

    @Test func oneConnectionMoreThanTheLimitGetsAnErrorLineAndIsClosed() async throws {
        try await ServerUnderTest.with(Self.limits { $0.maximumConnections = 3 }) { server in
            var open = try (1...3).map { _ in try RawConnection(path: server.socketPath) }
            for connection in open {
                try connection.send("ping\n")
                #expect(try await onThread { connection.receive() }?["echo"] == .string("ping"))
            }
            let refused = try RawConnection(path: server.socketPath)
            let answer = try await onThread { (refused.receive(), refused.receive()) }
            #expect(answer.0?["error"]?["code"] == .string("too_many_connections"))
            #expect(answer.1 == nil)
            #expect(server.log.contains("refused a connection beyond the limit: 3 connections are open already"))
            // Once one closes, a new one is served again.
            open.removeLast()
            let next = try await onThread { () -> JSONValue? in
                for _ in 0..<200 {
                    // Until the loop has seen the close, a new connection is still refused
                    // and may be closed before the ping is even written.
                    let connection = try RawConnection(path: server.socketPath)
                    if (try? connection.send("ping\n")) != nil, let reply = connection.receive(), reply["echo"] != nil { return reply }
                    usleep(10_000)
                }
                return nil
            }
            #expect(next?["echo"] == .string("ping"))
        }
    }

    @Test(arguments: [99, 100, 101])
    func lineLengthLimitEdges(length: Int) async throws {
        try await ServerUnderTest.with(Self.limits { $0.maximumLineLength = 100 }) { server in
            let connection = try RawConnection(path: server.socketPath)
            let line = String(repeating: "y", count: length)
            try connection.send("first\n" + line + "\nafter\n")
            let replies = try await onThread { (connection.receive(), connection.receive(), connection.receive()) }
            #expect(replies.0?["echo"] == .string("first"), "earlier requests are answered first")
            if length <= 100 {
                #expect(replies.1?["echo"] == .string(line))
                #expect(replies.2?["echo"] == .string("after"))
            } else {
                #expect(replies.1?["error"]?["code"] == .string("line_too_long"))
                #expect(replies.2 == nil, "closed after the error")
            }
        }
    }

    @Test func aWatcherThatFallsBehindGetsAnOverflowLineAndNeverDelaysAnother() async throws {
        try await ServerUnderTest.with(Self.limits { $0.eventBacklog = 16 * 1024 }) { server in
            let slow = try RawConnection(path: server.socketPath)
            let fast = try RawConnection(path: server.socketPath)
            for watcher in [slow, fast] {
                try watcher.send("watch\n")
                #expect(try await onThread { watcher.receive() }?["watching"] == .bool(true))
            }
            let padding = String(repeating: "p", count: 200)
            let (batches, batchSize) = (40, 100)
            var received = 0
            // Events come in bursts; the watcher that reads gets every one of them while the
            // other reads nothing at all.
            for batch in 0..<batches {
                for number in 1...batchSize {
                    server.server.broadcast(ScriptedHandler.line(["event": .string("tick"), "n": .number(Double(batch * batchSize + number)), "pad": .string(padding)]))
                }
                received += try await onThread { (0..<batchSize).filter { _ in fast.receive()?["event"] == .string("tick") }.count }
            }
            #expect(received == batches * batchSize)
            // The one that fell behind learns how many it missed: none vanish silently.
            let (events, dropped) = try await onThread { () -> (Int, Int) in
                var events = 0, dropped = 0
                while let line = slow.receive() {
                    if line["event"] == .string("tick") { events += 1 }
                    if line["event"] == .string("overflow"), case .number(let count)? = line["dropped"] {
                        dropped += Int(count)
                        break
                    }
                }
                return (events, dropped)
            }
            #expect(dropped > 0)
            #expect(events + dropped == batches * batchSize, "\(events) delivered + \(dropped) reported dropped")
            // Caught up, it gets events again.
            server.server.broadcast(ScriptedHandler.line(["event": .string("last")]))
            #expect(try await onThread { slow.receive() }?["event"] == .string("last"))
        }
    }

    @Test func shutdownWritesOwedRepliesWithinTheGrace() async throws {
        let server = try ServerUnderTest(limits: Self.limits { $0.shutdownGrace = 5 })
        let connection = try RawConnection(path: server.socketPath)
        try connection.send("hold 1\n")
        #expect(await eventually { server.handler.held == 1 }, "\(server.handler.handled) handled, \(server.handler.held) held")
        await server.server.stopAccepting()
        let closing = Task { await server.server.closeConnections() }
        server.handler.release()
        await closing.value
        let replies = try await onThread { (connection.receive(), connection.receive()) }
        #expect(replies.0?["held"] == .string("hold 1"))
        #expect(replies.1 == nil)
        #expect(server.handler.handled == 1)
        await server.stop()
    }

    @Test func shutdownDoesNotWaitPastTheGraceForARequestThatNeverEnds() async throws {
        let server = try ServerUnderTest(limits: Self.limits { $0.shutdownGrace = 0.2 })
        let connection = try RawConnection(path: server.socketPath)
        try connection.send("hold forever\n")
        #expect(await eventually { server.handler.held == 1 }, "\(server.handler.handled) handled, \(server.handler.held) held")
        await server.server.stopAccepting()
        await server.server.closeConnections()
        #expect(try await onThread { connection.receive() } == nil, "closed unanswered once the grace ran out")
        // The request that never ends is cancelled after the grace, not left running.
        #expect(server.server.requestsUnderWay.count == 1)
        await server.server.finishRequests()
        #expect(server.log.contains("1 request(s) still waiting were cancelled at the stop"))
        await server.stop()
    }
}
