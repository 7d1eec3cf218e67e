import DevBackend
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct FaultInjectionTests {
    @Test func aStatusFaultAnswersWithRetryAfterForItsCount() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        try backend.addFault(DevBackend.FaultRule(route: .send, status: 503, retryAfter: 7, count: 1))
        let throttled = try await client.send(pns: "apns", to: "bob", message: "hi")
        #expect(throttled.status == 503)
        #expect(throttled.header("Retry-After") == "7")
        let normal = try await client.send(pns: "apns", to: "bob", message: "hi")
        #expect(normal.status == 200)
        #expect(normal.header("Retry-After") == nil)
        #expect(backend.requestCount(route: .send) == 2)
        #expect(backend.pushes().count == 1)
        #expect(backend.faults().isEmpty)
    }

    @Test func rulesApplyInOrderOnlyToTheirRouteUntilUsedUpOrCleared() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        try backend.addFault(DevBackend.FaultRule(route: .upsert, status: 410))
        try backend.addFault(DevBackend.FaultRule(route: .any, status: 429, count: 2))
        // Faults come before authentication.
        #expect(try await client.create(user: "x").status == 429)
        #expect(try await client.request("DELETE", "/api/register/1", authorization: nil).status == 429)
        let id = try await client.createID()
        #expect(try await client.upsert(id: id, platform: "apns", handle: "A", tags: []).status == 410)
        #expect(try await client.upsert(id: id, platform: "apns", handle: "A", tags: []).status == 410)
        #expect(backend.faults() == [DevBackend.FaultRule(route: .upsert, status: 410)])
        backend.clearFaults()
        #expect(try await client.upsert(id: id, platform: "apns", handle: "A", tags: []).status == 200)
        // Unknown routes are never faulted.
        try backend.addFault(DevBackend.FaultRule(route: .any, status: 503))
        #expect(try await client.request("GET", "/api/other").status == 404)
    }

    @Test func aDelayOnlyRuleDelaysThenHandlesNormally() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        try backend.addFault(DevBackend.FaultRule(route: .create, delay: 0.2, count: 1))
        #expect(try await client.create().status == 200)
        #expect(backend.requests().map(\.status) == [200])
        #expect(backend.faults().isEmpty)
    }

    @Test func aDelayLongerThanTheClientWaitsTimesOutAndStopStillReturns() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend, timeout: 0.5)
        defer { client.close() }

        try backend.addFault(DevBackend.FaultRule(route: .send, delay: 600))
        let error = await #expect(throws: URLError.self) {
            _ = try await client.send(pns: "apns", to: "bob", message: "hi")
        }
        #expect(error?.code == .timedOut)
        // stop() in the defer must interrupt the 600 s delay rather than wait it out.
    }

    @Test func aDropClosesTheConnectionWithoutAResponse() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        try backend.addFault(DevBackend.FaultRule(route: .create, drop: true))
        await #expect(throws: URLError.self) {
            _ = try await client.create()
        }
        #expect(backend.requests().allSatisfy { $0.route == .create && $0.status == nil })
        #expect(backend.requestCount(route: .create) >= 1)
        backend.clearFaults()
        #expect(try await client.create().status == 200)
    }

    @Test func aDropSeenOnARawConnection() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        try backend.addFault(DevBackend.FaultRule(route: .create, drop: true, count: 1))

        let raw = try RawHTTPClient(port: backend.port)
        try raw.send("POST /api/register HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YTph\r\nContent-Length: 0\r\n\r\n")
        #expect(try raw.isClosedByServer())
    }

    @Test func invalidRulesAreRefused() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        #expect(throws: (any Error).self) { try backend.addFault(DevBackend.FaultRule(route: .any, delay: -1)) }
        #expect(throws: (any Error).self) { try backend.addFault(DevBackend.FaultRule(route: .any, status: 42)) }
        #expect(backend.faults().isEmpty)
    }
}
