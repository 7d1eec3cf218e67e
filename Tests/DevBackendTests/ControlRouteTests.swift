import DevBackend
import Foundation
import Testing

@Suite struct ControlRouteTests {
    @Test func faultsCanBeAddedListedAndClearedWithoutAuthentication() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let rule = Data(#"{"route":"send","status":503,"retryAfter":2,"count":1}"#.utf8)
        let added = try await client.request("POST", "/_dev/faults", authorization: nil, body: rule)
        #expect(added.status == 200)
        #expect(backend.faults() == [DevBackend.FaultRule(route: .send, status: 503, retryAfter: 2, count: 1)])
        let throttled = try await client.send(pns: "apns", to: "bob", message: "hi")
        #expect(throttled.status == 503)
        #expect(throttled.header("Retry-After") == "2")

        _ = try await client.request("POST", "/_dev/faults", authorization: nil, body: Data(#"{"route":"any","drop":true}"#.utf8))
        #expect(try await client.request("DELETE", "/_dev/faults", authorization: nil).status == 200)
        #expect(backend.faults().isEmpty)

        #expect(try await client.request("POST", "/_dev/faults", authorization: nil, body: Data("{}".utf8)).status == 400)
        #expect(try await client.request("POST", "/_dev/faults", authorization: nil, body: Data(#"{"route":"x"}"#.utf8)).status == 400)
        #expect(try await client.request("POST", "/_dev/faults", authorization: nil, body: Data(#"{"route":"any","delay":-2}"#.utf8)).status == 400)
        #expect(try await client.request("GET", "/_dev/nothing", authorization: nil).status == 404)
    }

    @Test func expireMakesTheIDGone() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.register(platform: "apns", handle: "AB")
        #expect(try await client.request("POST", "/_dev/expire/\(id)", authorization: nil).status == 200)
        #expect(backend.registrations().isEmpty)
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: []).status == 500)
    }

    @Test func stateShowsEverythingButSecretsAndResetForgetsIt() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.register(platform: "apns", handle: "DEVICETOKEN", tags: ["from:alice"])
        _ = try await client.send(pns: "apns", to: "alice", message: "hi")
        _ = try await client.request("POST", "/api/register", authorization: BackendClient.basic("mallory", "hunter2"))

        let reply = try await client.request("GET", "/_dev/state", authorization: nil)
        #expect(reply.status == 200)
        #expect(!reply.text.contains("hunter2"))
        #expect(!reply.text.contains(Data("alice:alice".utf8).base64EncodedString()))
        #expect(!reply.text.lowercased().contains("authorization"))
        let state = try JSONDecoder().decode(DevBackend.StateSnapshot.self, from: reply.body)
        #expect(state == backend.snapshot())
        #expect(state.registrations.map(\.id) == [id])
        #expect(state.pushes.map(\.displayedText) == ["From alice: hi"])
        #expect(state.requests.map(\.route) == [.create, .upsert, .send, .create])
        #expect(state.requests.map(\.user) == ["alice", "alice", "alice", nil])
        #expect(state.requests.map(\.status) == [200, 200, 200, 403])
        // Absent values are explicit nulls, so the JSON shape never changes.
        let parsed = try JSONSerialization.jsonObject(with: reply.body)
        let object = try #require(parsed as? [String: Any])
        let last = try #require((object["requests"] as? [[String: Any]])?.last)
        #expect(last.keys.sorted() == ["api_key_in_query", "method", "path", "route", "status", "user"])

        try backend.addFault(DevBackend.FaultRule(route: .any, status: 500))
        #expect(try await client.request("POST", "/_dev/reset", authorization: nil).status == 200)
        #expect(backend.snapshot() == DevBackend.StateSnapshot(registrations: [], pushes: [], requests: [], faults: []))
        // The id issued before the reset is forgotten too.
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: []).status == 500)
        #expect(try await client.send(pns: "apns", to: "bob", message: "again").status == 200)
        #expect(backend.pushes().map(\.sequence) == [1])
    }
}
