import Foundation
import Synchronization
import NotifyTestSupport
#if !canImport(Darwin)
import CCurl
#endif
import Testing
@testable import NotifyCore

/// The HTTP client itself against a scripted loopback server: what it reads, how long it
/// waits, how many connections it opens, and how it stops.
@Suite struct HTTPTransportTests {
    static let okReply = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n\"id\"".utf8)

    static func transport(timeout: Double = 10, connections: Int = 4, limit: Int = HTTPBackend.defaultReplyLimit) -> any HTTPTransport {
        transport(SettingsStore(.init(requestTimeout: timeout, maxConnections: connections)), limit: limit)
    }

    static func transport(_ settings: SettingsStore, limit: Int = HTTPBackend.defaultReplyLimit) -> any HTTPTransport {
        #if canImport(Darwin)
        URLSessionTransport(settings: settings, replyLimit: limit)
        #else
        CurlTransport(settings: settings, replyLimit: limit)
        #endif
    }

    static func post(_ server: ScriptedHTTPServer) -> HTTPRequest {
        HTTPRequest(method: "POST", url: server.url, headers: ["Accept: application/json"], body: Data())
    }

    /// A body without a length, 100 MB long: the client stops reading soon after the bound,
    /// so the server cannot even push much of it into the socket buffers.
    @Test func aChunkedReplyPastTheBoundIsCutOffNotRead() async throws {
        let sent = Atomic<Int>(0)
        let server = try ScriptedHTTPServer { connection in
            _ = connection.readRequest()
            guard connection.write(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)) else { return }
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x5B, count: 0x10000) + Array("\r\n".utf8)
            for _ in 0..<1600 {
                guard connection.write(chunk) else { return }
                sent.add(0x10000, ordering: .relaxed)
            }
            _ = connection.write(Array("0\r\n\r\n".utf8))
        }
        defer { server.stop() }
        let transport = Self.transport()
        defer { transport.invalidate() }
        let outcome = await transport.perform(Self.post(server))
        guard case .tooLarge = outcome else {
            Issue.record("expected a refusal as too large, got \(outcome)")
            return
        }
        #expect(await eventually { server.counts.open == 0 }, "the connection was dropped, not drained")
        #expect(sent.load(ordering: .relaxed) < 32 << 20, "\(sent.load(ordering: .relaxed)) bytes left the server")
    }

    @Test func aReplyAtTheBoundIsReadWhole() async throws {
        let body = [UInt8](repeating: 0x61, count: 1000)
        let server = try ScriptedHTTPServer { connection in
            _ = connection.readRequest()
            connection.write(Array("HTTP/1.1 503 Busy\r\nRetry-After: 7\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n".utf8) + body + Array("\r\n0\r\n\r\n".utf8))
        }
        defer { server.stop() }
        let transport = Self.transport(limit: 1000)
        defer { transport.invalidate() }
        guard case .response(let status, _, let retryAfter, let reply) = await transport.perform(Self.post(server)) else {
            Issue.record("no response")
            return
        }
        #expect(status == 503)
        #expect(retryAfter == "7")
        #expect(Array(reply) == body)
    }

    /// A backend that accepts and never answers: the request ends at its timeout.
    @Test func aSilentBackendTimesOut() async throws {
        let server = try ScriptedHTTPServer { connection in
            _ = connection.readRequest()
            connection.waitForClose()
        }
        defer { server.stop() }
        let transport = Self.transport(timeout: 0.3)
        defer { transport.invalidate() }
        let outcome = await transport.perform(Self.post(server))
        guard case .failed(let failure) = outcome else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
        #expect(failure.kind == .timedOut)
    }

    @Test func requestsOneAfterAnotherShareOneConnection() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil { connection.write(Self.okReply) }
        }
        defer { server.stop() }
        let transport = Self.transport()
        defer { transport.invalidate() }
        for _ in 0..<5 {
            guard case .response(200, _, _, _) = await transport.perform(Self.post(server)) else {
                Issue.record("a request failed")
                return
            }
        }
        #expect(server.counts.requests == 5)
        #expect(server.counts.accepted == 1)
    }

    #if !canImport(Darwin)
    /// The requests of a lane go one after another, each started by the HTTP thread once
    /// the one before it was answered with a 2xx; none goes after one that was not, until
    /// the lane is ended. Another lane is not held up by it.
    @Test func aLaneSendsOneAtATimeAndNothingAfterARefusal() async throws {
        let seen = Mutex<[String]>([])
        let server = try ScriptedHTTPServer { connection in
            while let request = connection.readRequest() {
                let number = request.split(separator: " ").dropFirst().first.flatMap { $0.split(separator: "=").last }.map(String.init) ?? "?"
                seen.withLock { $0.append(number) }
                // Slow enough that requests going side by side would open a second connection.
                usleep(20_000)
                connection.write(number == "3" ? Array("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n".utf8) : Self.okReply)
            }
        }
        defer { server.stop() }
        let transport = Self.transport()
        defer { transport.invalidate() }
        let lanes = try #require(transport.lanes, "libcurl keeps lanes")
        let outcomes = Mutex<[Int: String]>([:])
        func request(_ number: Int) -> HTTPRequest {
            HTTPRequest(method: "POST", url: URL(string: server.url.absoluteString + "?n=\(number)")!, headers: [], body: Data())
        }
        func hand(_ number: Int, lane: UInt64) {
            lanes.perform(request(number), lane: lane) { outcome in
                let name = switch outcome {
                case .response(let status, _, _, _): "\(status)"
                case .notAttempted: "not sent"
                case .tooLarge, .failed: "failed"
                }
                outcomes.withLock { $0[number] = name }
            }
        }
        for number in 1...6 { hand(number, lane: 1) }
        #expect(await eventually { outcomes.withLock { $0.count } == 6 })
        #expect(seen.withLock { $0 } == ["1", "2", "3"])
        #expect(outcomes.withLock { $0 } == [1: "200", 2: "200", 3: "503", 4: "not sent", 5: "not sent", 6: "not sent"])
        #expect(server.counts.accepted == 1, "one at a time, on one connection")
        // Broken until ended, however late a request comes; another lane goes meanwhile.
        hand(7, lane: 1)
        hand(8, lane: 2)
        #expect(await eventually { outcomes.withLock { $0.count } == 8 })
        #expect(outcomes.withLock { [$0[7], $0[8]] } == ["not sent", "200"])
        lanes.endLane(1)
        hand(9, lane: 1)
        #expect(await eventually { outcomes.withLock { $0[9] } == "200" })
    }

    /// Accepted requests of a lane that goes on are told in groups, but never held for
    /// the next one: with that one hanging, the first is told all the same.
    @Test func anAcceptedRequestIsToldWhileTheNextOfItsLaneHangs() async throws {
        let hang = DispatchSemaphore(value: 0)
        let server = try ScriptedHTTPServer { connection in
            var count = 0
            while connection.readRequest() != nil {
                count += 1
                if count == 2 { hang.wait() }
                connection.write(Self.okReply)
            }
        }
        defer { server.stop() }
        let transport = Self.transport()
        defer { transport.invalidate() }
        let lanes = try #require(transport.lanes, "libcurl keeps lanes")
        let told = Mutex<[Int]>([])
        for number in 1...2 {
            lanes.perform(Self.post(server), lane: 1) { _ in told.withLock { $0.append(number) } }
        }
        #expect(await eventually { told.withLock { $0 } == [1] }, "the first is told while the second hangs")
        hang.signal()
        #expect(await eventually { told.withLock { $0 } == [1, 2] })
    }

    /// A lane is forgotten once ended, even when its break and its end reach the HTTP
    /// thread in the same pass (the break comes first: a request that could not be handed
    /// over, then its answer, then the end). Kept, a broken lane would stay for the
    /// daemon's life; here the lane's number is used again to see that it was not kept.
    @Test func aLaneBrokenAndEndedInOnePassIsForgotten() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil { connection.write(Self.okReply) }
        }
        defer { server.stop() }
        let transport = Self.transport()
        defer { transport.invalidate() }
        let lanes = try #require(transport.lanes, "libcurl keeps lanes")
        // The HTTP thread is held in a caller's hand-off while the break and the end come.
        let holding = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        lanes.perform(Self.post(server), lane: 1) { _ in
            holding.store(true, ordering: .sequentiallyConsistent)
            release.wait()
        }
        #expect(await eventually { holding.load(ordering: .sequentiallyConsistent) })
        lanes.breakLane(2)
        lanes.endLane(2)
        release.signal()
        let outcome = Mutex<String?>(nil)
        lanes.perform(Self.post(server), lane: 2) { result in
            outcome.withLock { $0 = if case .response(let status, _, _, _) = result { "\(status)" } else { "\(result)" } }
        }
        #expect(await eventually { outcome.withLock { $0 } != nil })
        #expect(outcome.withLock { $0 } == "200")
    }
    #endif

    /// A connection from before the network changed may go over a link that is gone, and
    /// would hold the request until its timeout: the next request opens a new one, which
    /// is reused in turn, and the old one is closed.
    @Test func afterANetworkChangeRequestsOpenANewConnection() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil { connection.write(Self.okReply) }
        }
        defer { server.stop() }
        let transport = Self.transport()
        defer { transport.invalidate() }
        for round in 0..<3 {
            if round == 1 { transport.networkChanged() }
            guard case .response(200, _, _, _) = await transport.perform(Self.post(server)) else {
                Issue.record("a request failed")
                return
            }
        }
        #expect(server.counts.requests == 3)
        #expect(server.counts.accepted == 2)
        #expect(await eventually { server.counts.open == 1 }, "the connection from before is closed")
    }

    /// Twelve requests at once, two connections allowed: all answered, never more than two
    /// connections open.
    @Test func concurrentRequestsShareAtMostTheAllowedConnections() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil {
                usleep(20_000)
                connection.write(Self.okReply)
            }
        }
        defer { server.stop() }
        let transport = Self.transport(connections: 2)
        defer { transport.invalidate() }
        let request = Self.post(server)
        let answered = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    if case .response(200, _, _, _) = await transport.perform(request) { return true }
                    return false
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(answered == 12)
        #expect(server.counts.mostOpen <= 2, "\(server.counts.mostOpen) connections at once")
    }

    @Test func cancellingTheTaskEndsItsRequest() async throws {
        let server = try ScriptedHTTPServer { connection in
            _ = connection.readRequest()
            connection.waitForClose()
        }
        defer { server.stop() }
        let transport = Self.transport(timeout: 60)
        defer { transport.invalidate() }
        let request = Self.post(server)
        let task = Task { await transport.perform(request) }
        #expect(await eventually { server.counts.requests == 1 })
        task.cancel()
        guard case .failed(let failure) = await task.value else {
            Issue.record("a cancelled request got an answer")
            return
        }
        #expect(failure.kind == .cancelled)
        #expect(await eventually { server.counts.open == 0 }, "its connection is closed")
    }

    @Test func aRefusedConnectionSaysSo() async throws {
        let server = try ScriptedHTTPServer { _ in }
        let url = server.url
        server.stop()
        let transport = Self.transport()
        defer { transport.invalidate() }
        guard case .failed(let failure) = await transport.perform(HTTPRequest(method: "DELETE", url: url, headers: [], body: nil)) else {
            Issue.record("a closed port answered")
            return
        }
        #expect(failure.kind == .connectionRefused)
    }

    #if !canImport(Darwin)
    /// The system never routes a TCP connection to a multicast address: connect() fails at
    /// once with ENETUNREACH, as it does for any address while this machine is offline.
    /// libcurl calls both failures "couldn't connect"; its errno tells them apart.
    @Test func aConnectionWithNoRouteIsToldFromARefusedOne() async throws {
        let transport = Self.transport()
        defer { transport.invalidate() }
        let request = HTTPRequest(method: "POST", url: URL(string: "http://224.0.0.1:9/api/register")!, headers: [], body: Data())
        guard case .failed(let failure) = await transport.perform(request) else {
            Issue.record("a multicast address answered")
            return
        }
        #expect(failure.kind == .noRoute)
        #expect(HTTPFailure.Kind(curlCode: Int32(NCURL_COULDNT_CONNECT), systemError: ENETDOWN) == .noRoute)
        #expect(HTTPFailure.Kind(curlCode: Int32(NCURL_COULDNT_CONNECT), systemError: EHOSTUNREACH) == .connectionRefused,
                "a host that does not answer on a network this machine is on is the backend's trouble")
    }
    #endif
}
