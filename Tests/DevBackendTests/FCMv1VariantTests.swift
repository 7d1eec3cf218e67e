import DevBackend
import Foundation
import Testing

/// `--android-name fcmv1`: the tutorial as updated for FCM v1. Its RegisterController knows
/// `wns`, `apns` and `fcmv1` only, lower-cased, and answers anything else with 400
/// "Unsupported platform"; its NotificationsController sends `pns=fcmv1` in the FCM v1
/// wrapper, pasting the text unescaped, and answers any other Android name with 500.
@Suite struct FCMv1VariantTests {
    static let updated = DevBackend.Options(androidPlatformName: .fcmv1, quiet: true)

    @Test func registrationsAreTakenUnderWnsApnsAndFCMv1InAnyCase() async throws {
        let backend = try startBackend(Self.updated)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        for platform in ["wns", "apns", "fcmv1", "FCMv1", "APNS"] {
            let id = try await client.createID()
            #expect(try await client.upsert(id: id, platform: platform, handle: "t", tags: []).status == 200, "\(platform)")
        }
        #expect(backend.registrations().map(\.platform) == ["wns", "apns", "fcmv1", "fcmv1", "apns"])
    }

    @Test(arguments: ["fcm", "gcm", "mpns", "fcm1", ""])
    func anyOtherPlatformIsRefusedWith400UnsupportedPlatform(platform: String) async throws {
        let backend = try startBackend(Self.updated)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.createID()
        let reply = try await client.upsert(id: id, platform: platform, handle: "t", tags: [])
        #expect(reply.status == 400)
        #expect(reply.text.contains("Unsupported platform"), "\(reply.text)")
        #expect(backend.registrations().isEmpty)
    }

    /// The tutorial as written knows no fcmv1, and says nothing about why.
    @Test(arguments: [DevBackend.AndroidPlatformName.fcm, .gcm, .both])
    func theTutorialAsWrittenRefusesFCMv1WithAnEmpty400(option: DevBackend.AndroidPlatformName) async throws {
        let backend = try startBackend(DevBackend.Options(androidPlatformName: option, quiet: true))
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let id = try await client.createID()
        let reply = try await client.upsert(id: id, platform: "fcmv1", handle: "t", tags: [])
        #expect(reply.status == 400)
        #expect(reply.body.isEmpty)
        #expect(try await client.send(pns: "fcmv1", to: "bob", message: "hi").status == 500, "an unknown pns")
        #expect(backend.pushes().isEmpty)
    }

    @Test func fcmv1SendsTheMessageDataWrapperToFCMv1RegistrationsOnly() async throws {
        let backend = try startBackend(Self.updated)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let android = try await client.register(platform: "fcmv1", handle: "f1", user: "bob")
        _ = try await client.register(platform: "apns", handle: "A1", user: "bob")
        #expect(try await client.send(pns: "FCMv1", to: "bob", message: "yo").status == 200)
        let push = try #require(backend.pushes().first)
        #expect(push.payload == #"{ "message":{"data" : {"message":"From alice: yo"}}}"#)
        #expect(push.displayedText == "From alice: yo")
        #expect(push.pns == "fcmv1")
        #expect(push.recipients == [android])
    }

    /// Pasted unescaped, as before: a quote breaks the JSON and the hub's refusal is a 500.
    @Test func theTextIsStillPastedUnescaped() async throws {
        let backend = try startBackend(Self.updated)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.send(pns: "fcmv1", to: "bob", message: #"say "hi""#).status == 500)
        #expect(try await client.send(pns: "fcmv1", to: "bob", message: #"say \"hi\""#).status == 200)
        #expect(backend.pushes().map(\.valid) == [false, true])
        #expect(backend.pushes().last?.displayedText == #"From alice: say "hi""#)
    }

    @Test(arguments: ["fcm", "gcm", "mpns", "android"])
    func anyOtherPnsIsA500WithNoPush(pns: String) async throws {
        let backend = try startBackend(Self.updated)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.send(pns: pns, to: "bob", message: "hi").status == 500)
        #expect(try await client.send(pns: "apns", to: "bob", message: "hi").status == 200)
        #expect(try await client.send(pns: "wns", to: "bob", message: "hi").status == 200)
        #expect(backend.pushes().map(\.pns) == ["apns", "wns"])
    }

    @Test func anFCMv1PayloadOverFourKilobytesIsRejected() async throws {
        let backend = try startBackend(Self.updated)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.send(pns: "fcmv1", to: "bob", message: "").status == 200)
        let overhead = try #require(backend.pushes().first).payload.utf8.count
        let fitting = String(repeating: "x", count: 4096 - overhead)
        #expect(try await client.send(pns: "fcmv1", to: "bob", message: fitting).status == 200)
        #expect(try await client.send(pns: "fcmv1", to: "bob", message: fitting + "x").status == 500)
        #expect(backend.pushes().map(\.valid) == [true, true, false])
    }

    /// Updated and redeployed in front of the same hub: the registrations made before are
    /// still there, and a PUT to one of their ids moves it to fcmv1.
    @Test func aBackendDeployedAnewBeforeTheSameHubKeepsItsRegistrations() async throws {
        let before = try startBackend()
        defer { before.stop() }
        let first = BackendClient(before)
        defer { first.close() }
        let id = try await first.register(platform: "fcm", handle: "f1", user: "bob")

        let after = DevBackendServer(options: Self.updated, sameHubAs: before)
        try after.start()
        defer { after.stop() }
        let second = BackendClient(after)
        defer { second.close() }
        #expect(after.registrations().map(\.id) == [id])
        #expect(after.requests().isEmpty && after.pushes().isEmpty)
        #expect(try await second.upsert(id: id, platform: "fcmv1", handle: "f1", tags: [], user: "bob").status == 200)
        #expect(after.registrations().map(\.platform) == ["fcmv1"])
        #expect(before.registrations().map(\.platform) == ["fcm"], "a copy, not the same store")
    }

    @Test func theCommandLineSelectsIt() throws {
        #expect(try DevBackend.parseArguments(["--android-name", "fcmv1"]) == .run(DevBackend.Options(androidPlatformName: .fcmv1, logRequests: true)))
        #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(["--android-name", "v1"]) }
    }
}
