import DevBackend
import Foundation
import Testing

/// Fault injection, inspection and reset for the installations dialect.
@Suite struct InstallationsControlTests {
    @Test func faultsApplyToTheInstallationRoutesBeforeTheKeyIsChecked() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        try backend.addFault(DevBackend.FaultRule(route: .installationUpsert, status: 503, retryAfter: 9, count: 1))
        try backend.addFault(DevBackend.FaultRule(route: .notificationRequest, status: 429, count: 1))
        try backend.addFault(DevBackend.FaultRule(route: .installationDelete, drop: true, count: 1))

        let throttled = try await client.putInstallation(id: "phone", key: nil)
        #expect(throttled.status == 503)
        #expect(throttled.header("Retry-After") == "9")
        #expect(try await client.putInstallation(id: "phone").status == 200)
        #expect(try await client.notify(text: "hi", action: "a").status == 429)
        #expect(try await client.notify(text: "hi", action: "a").status == 200)
        // On a raw connection: URLSession would send a DELETE again on a new one.
        let raw = try RawHTTPClient(port: backend.port)
        try raw.send("DELETE /api/notifications/installations/phone HTTP/1.1\r\nHost: x\r\napikey: \(testAPIKey)\r\n\r\n")
        #expect(try raw.isClosedByServer())
        #expect(backend.installations().map(\.id) == ["phone"])
        #expect(try await client.deleteInstallation("phone").status == 200)
        #expect(backend.installations().isEmpty)

        #expect(backend.faults().isEmpty)
        #expect(backend.requestCount(route: .installationUpsert) == 2)
        #expect(backend.requestCount(route: .notificationRequest) == 2)
        #expect(backend.requestCount(route: .installationDelete) == 2)
        #expect(backend.notificationRequests().count == 1)
    }

    @Test func faultRulesForTheNewRoutesCanBePostedByName() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        for route in ["installationUpsert", "installationDelete", "notificationRequest"] {
            let rule = Data(#"{"route":"\#(route)","status":500,"count":1}"#.utf8)
            #expect(try await client.request("POST", "/_dev/faults", authorization: nil, body: rule).status == 200)
        }
        #expect(backend.faults().map(\.route) == [.installationUpsert, .installationDelete, .notificationRequest])
        #expect(try await client.deleteInstallation("x").status == 500)
        #expect(try await client.notify(text: "hi", action: "a").status == 500)
        #expect(try await client.putInstallation(id: "x").status == 500)
        #expect(backend.faults().isEmpty)
    }

    @Test func stateShowsInstallationsAndRequestsButNeverTheKeyAndResetForgetsThem() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.putInstallation(id: "phone", platform: "fcmv1", pushChannel: "F1", tags: ["username:bob"]).status == 200)
        #expect(try await client.notify(text: "hi", action: "open", tags: ["username:bob"]).status == 200)
        #expect(try await client.notify(text: "hi").status == 422)
        let queried = "/api/notifications/installations/gone?apikey=" + client.percentEncoded(testAPIKey)
        #expect(try await client.installationRequest("DELETE", queried, key: nil).status == 200)

        let reply = try await client.request("GET", "/_dev/state", authorization: nil)
        #expect(reply.status == 200)
        #expect(!reply.text.contains(testAPIKey))
        #expect(!reply.text.lowercased().contains("apikey"))
        let state = try JSONDecoder().decode(DevBackend.StateSnapshot.self, from: reply.body)
        #expect(state == backend.snapshot())
        #expect(state.installations == [DevBackend.Installation(id: "phone", platform: "fcmv1", pushChannel: "F1", tags: ["username:bob"])])
        #expect(state.notificationRequests.map(\.recipients) == [["phone"], []])
        #expect(state.notificationRequests.map(\.status) == [200, 422])
        #expect(state.requests.map(\.route) == [.installationUpsert, .notificationRequest, .notificationRequest, .installationDelete])
        #expect(state.requests.map(\.user) == [nil, nil, nil, nil])
        // Absent values are explicit nulls, so the JSON shape never changes.
        let object = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        let refused = try #require((object["notificationRequests"] as? [[String: Any]])?.last)
        #expect(refused["displayedText"] is NSNull)
        #expect(refused["action"] is NSNull)

        #expect(try await client.request("POST", "/_dev/reset", authorization: nil).status == 200)
        #expect(backend.snapshot() == DevBackend.StateSnapshot(registrations: [], pushes: [], requests: [], faults: []))
        #expect(backend.installations().isEmpty && backend.notificationRequests().isEmpty)
        #expect(try await client.notify(text: "again", action: "a").status == 200)
        #expect(backend.notificationRequests().map(\.sequence) == [1])
    }
}
