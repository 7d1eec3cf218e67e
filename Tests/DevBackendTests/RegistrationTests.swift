import DevBackend
import Foundation
import Testing

@Suite struct RegistrationTests {
    @Test func createAnswersAJSONStringWithAUniqueID() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.create()
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
        #expect(reply.text.hasPrefix("\"") && reply.text.hasSuffix("\""))
        let first = try JSONDecoder().decode(String.self, from: reply.body)
        let second = try await client.createID()
        #expect(first != second)
        for id in [first, second] {
            #expect(!id.isEmpty)
            #expect(id.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-") })
        }
        // Issued but not upserted: known to the hub, not yet a registration.
        #expect(backend.registrations().isEmpty)
    }

    @Test func aKnownHandleReturnsTheFirstIDAndDeletesTheRestWhoeverOwnsThem() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let handle = "shared-token"
        let first = try await client.createID(user: "alice")
        #expect(try await client.upsert(id: first, platform: "apns", handle: handle, tags: [], user: "alice").status == 200)
        let second = try await client.createID(user: "bob")
        #expect(try await client.upsert(id: second, platform: "apns", handle: handle, tags: [], user: "bob").status == 200)
        #expect(backend.registrations().count == 2)

        let reused = try await client.createID(handle: handle, user: "carol")
        #expect(reused == first)
        #expect(backend.registrations().map(\.id) == [first])
    }

    @Test func theHandleIsPercentDecodedAndAPlusStaysAPlus() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let handle = "fcm:APA91b+x/y=z"
        let id = try await client.register(platform: "fcm", handle: handle)
        #expect(try await client.createID(handle: handle) == id)
        // A raw '+' is kept, not turned into a space.
        let raw = try await client.request("POST", "/api/register?handle=fcm%3AAPA91b+x%2Fy%3Dz")
        #expect(try JSONDecoder().decode(String.self, from: raw.body) == id)
    }

    @Test func upsertStoresTheRegistrationWithTheUsernameTag() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.createID()
        let reply = try await client.upsert(id: id, platform: "apns", handle: "ABCDEF", tags: ["from:alice", "news", "news"])
        #expect(reply.status == 200)
        #expect(backend.registrations() == [
            DevBackend.Registration(id: id, platform: "apns", handle: "ABCDEF", tags: ["from:alice", "news", "username:alice"]),
        ])
        // A second upsert replaces the first.
        #expect(try await client.upsert(id: id, platform: "wns", handle: "https://wns/ch", tags: []).status == 200)
        #expect(backend.registrations().map(\.platform) == ["wns"])
        #expect(backend.registrations().first?.tags == ["username:alice"])
    }

    @Test func nullOrMissingTagsMakeTheServerThrow() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.createID()
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: nil).status == 500)
        let missing = Data(#"{"Platform":"apns","Handle":"AB"}"#.utf8)
        #expect(try await client.request("PUT", "/api/register/\(id)", body: missing).status == 500)
        #expect(backend.registrations().isEmpty)
    }

    @Test func badPlatformBodyOrTagsAreBadRequests() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.createID()
        #expect(try await client.upsert(id: id, platform: "ios", handle: "AB", tags: []).status == 400)
        #expect(try await client.upsert(id: id, platform: "APNS", handle: "AB", tags: []).status == 400)
        #expect(try await client.request("PUT", "/api/register/\(id)", body: Data("not json".utf8)).status == 400)
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: ["has space"]).status == 400)
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: [String(repeating: "a", count: 121)]).status == 400)
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: ["ok_@#.:-1"]).status == 200)
        // Json.NET binds property names case-insensitively.
        let lower = Data(#"{"platform":"apns","handle":"AB","tags":[]}"#.utf8)
        #expect(try await client.request("PUT", "/api/register/\(id)", body: lower).status == 200)
    }

    @Test(arguments: [
        (DevBackend.AndroidPlatformName.fcm, ["fcm"], ["gcm", "fcmv1"]),
        (.gcm, ["gcm"], ["fcm", "fcmv1"]),
        (.both, ["fcm", "gcm"], ["fcmv1"]),
    ])
    func theAndroidPlatformNameFollowsTheOption(
        option: DevBackend.AndroidPlatformName, accepted: [String], refused: [String]
    ) async throws {
        let backend = try startBackend(DevBackend.Options(androidPlatformName: option, quiet: true))
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        for platform in accepted {
            let id = try await client.createID()
            #expect(try await client.upsert(id: id, platform: platform, handle: "t", tags: []).status == 200)
        }
        for platform in refused {
            let id = try await client.createID()
            #expect(try await client.upsert(id: id, platform: platform, handle: "t", tags: []).status == 400)
        }
        for platform in ["apns", "wns", "mpns"] {
            let id = try await client.createID()
            #expect(try await client.upsert(id: id, platform: platform, handle: "t", tags: []).status == 200)
        }
    }

    @Test func anExpiredOrUnknownIDIsA500ByDefault() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.register(platform: "apns", handle: "AB")
        backend.expire(id: id)
        #expect(backend.registrations().isEmpty)
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: []).status == 500)
        #expect(try await client.upsert(id: "123-456-789", platform: "apns", handle: "AB", tags: []).status == 500)
        #expect(try await client.request("DELETE", "/api/register/\(id)").status == 500)
    }

    @Test(arguments: [410, 404])
    func theGoneStatusOptionPassesTheHubAnswerOn(status: Int) async throws {
        let backend = try startBackend(DevBackend.Options(goneStatus: status, quiet: true))
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.createID()
        backend.expire(id: id)
        #expect(try await client.upsert(id: id, platform: "apns", handle: "AB", tags: []).status == status)
    }

    @Test func deleteRemovesTheRegistrationAndAnUnknownIDIsA500() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.register(platform: "apns", handle: "AB")
        #expect(try await client.request("DELETE", "/api/register/\(id)").status == 200)
        #expect(backend.registrations().isEmpty)
        #expect(try await client.request("DELETE", "/api/register/\(id)").status == 500)
        #expect(try await client.request("DELETE", "/api/register/nope").status == 500)
        #expect(backend.requestCount(route: .delete) == 3)
    }
}
