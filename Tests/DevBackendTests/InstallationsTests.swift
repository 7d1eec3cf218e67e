import DevBackend
import Foundation
import Testing

/// `PUT` and `DELETE /api/notifications/installations`, as the backend service answers them.
@Suite struct InstallationsTests {
    @Test func aPutStoresTheInstallationAndAnotherWithTheSameIDReplacesIt() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let first = try await client.putInstallation(id: "phone", platform: "apns", pushChannel: "AB12", tags: ["username:bob"])
        #expect(first.status == 200)
        #expect(first.body.isEmpty)
        #expect(try await client.putInstallation(id: "tablet", platform: "fcmv1", pushChannel: "f:1-x", tags: []).status == 200)
        #expect(try await client.putInstallation(id: "phone", platform: "fcmv1", pushChannel: "CD34", tags: ["a", "a", "b"]).status == 200)
        #expect(backend.installations() == [
            DevBackend.Installation(id: "phone", platform: "fcmv1", pushChannel: "CD34", tags: ["a", "b"]),
            DevBackend.Installation(id: "tablet", platform: "fcmv1", pushChannel: "f:1-x", tags: []),
        ])
        #expect(backend.requestCount(route: .installationUpsert) == 3)
        #expect(backend.requests().map(\.user) == [nil, nil, nil])
    }

    @Test func propertyNamesAndTheRouteIgnoreCaseAndTagsMayBeLeftOut() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let body = Data(#"{"InstallationId":"i1","PLATFORM":"apns","pushchannel":"AB","extra":1}"#.utf8)
        let reply = try await client.installationRequest("PUT", "/API/Notifications/Installations/", body: body)
        #expect(reply.status == 200)
        #expect(backend.installations() == [DevBackend.Installation(id: "i1", platform: "apns", pushChannel: "AB", tags: [])])
    }

    @Test func aMissingOrEmptyRequiredStringIsA400ProblemDocument() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.putInstallation(json: #"{"installationId":"i1","platform":"apns","tags":[]}"#)
        #expect(reply.status == 400)
        #expect(reply.header("Content-Type")?.hasPrefix("application/problem+json") == true)
        let problem = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        #expect(problem["type"] as? String == "https://tools.ietf.org/html/rfc7231#section-6.5.1")
        #expect(problem["title"] as? String == "One or more validation errors occurred.")
        #expect(problem["status"] as? Int == 400)
        #expect(problem["errors"] as? [String: [String]] == ["PushChannel": ["The PushChannel field is required."]])

        let empties = try await client.putInstallation(json: #"{"installationId":"","platform":"  ","pushChannel":null}"#)
        #expect(empties.status == 400)
        let errors = try #require(try JSONSerialization.jsonObject(with: empties.body) as? [String: Any])["errors"]
        #expect((errors as? [String: [String]])?.keys.sorted() == ["InstallationId", "Platform", "PushChannel"])
        #expect(backend.installations().isEmpty)
    }

    @Test(arguments: ["not json", "", #"["a"]"#, #"{"installationId":"i","platform":"apns","pushChannel":"T","tags":"x"}"#,
                      #"{"installationId":7,"platform":"apns","pushChannel":"T"}"#])
    func aBodyThatIsNotTheModelIsA400ProblemDocument(body: String) async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.putInstallation(json: body)
        #expect(reply.status == 400)
        #expect(reply.header("Content-Type")?.hasPrefix("application/problem+json") == true)
        let problem = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        #expect(problem["status"] as? Int == 400)
        #expect(backend.installations().isEmpty)
    }

    @Test(arguments: ["fcm", "gcm", "wns", "APNS", "FcmV1"])
    func aPlatformOtherThanApnsOrFcmv1Is422(platform: String) async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.putInstallation(id: "i1", platform: platform)
        #expect(reply.status == 422)
        #expect(reply.body.isEmpty)
        #expect(backend.installations().isEmpty)
    }

    @Test func theOlderSampleAcceptsFcmInsteadOfFcmv1() async throws {
        let backend = try startInstallationsBackend(androidName: .fcm)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.putInstallation(id: "old", platform: "fcm").status == 200)
        #expect(try await client.putInstallation(id: "new", platform: "fcmv1").status == 422)
        #expect(backend.installations().map(\.platform) == ["fcm"])
    }

    @Test func theHubRefusesMoreThan60TagsOrAnInvalidTag() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let sixty = (1...60).map { "tag\($0)" }
        #expect(try await client.putInstallation(id: "full", tags: sixty).status == 200)
        let over = try await client.putInstallation(id: "over", tags: sixty + ["tag61"])
        #expect(over.status == 422)
        #expect(over.body.isEmpty)
        #expect(try await client.putInstallation(id: "spaced", tags: ["has space"]).status == 422)
        #expect(backend.installations().map(\.id) == ["full"])
        #expect(backend.installations().first?.tags.count == 60)
    }

    @Test func aDeleteRemovesTheInstallationAndAnUnknownIDIsNoError() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.putInstallation(id: "a b/c").status == 200)
        #expect(try await client.putInstallation(id: "keep").status == 200)
        let deleted = try await client.deleteInstallation("a b/c")
        #expect(deleted.status == 200)
        #expect(deleted.body.isEmpty)
        #expect(backend.installations().map(\.id) == ["keep"])
        #expect(try await client.deleteInstallation("a b/c").status == 200)
        #expect(try await client.deleteInstallation("never-stored").status == 200)
        #expect(backend.installations().map(\.id) == ["keep"])
        #expect(backend.requestCount(route: .installationDelete) == 3)
    }

    @Test func aBackendOnTheSameHubKeepsTheInstallations() async throws {
        let first = try startInstallationsBackend()
        defer { first.stop() }
        let client = BackendClient(first)
        defer { client.close() }
        #expect(try await client.putInstallation(id: "phone", tags: ["username:bob"]).status == 200)

        let second = DevBackendServer(
            options: DevBackend.Options(quiet: true, api: .installations, apiKey: testAPIKey), sameHubAs: first
        )
        #expect(second.installations() == first.installations())
        #expect(second.installations().count == 1)
        #expect(second.requests().isEmpty)
    }
}
