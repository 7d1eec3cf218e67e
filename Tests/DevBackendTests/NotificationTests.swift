import DevBackend
import Foundation
import Testing

@Suite struct NotificationTests {
    @Test func plainTextBecomesAValidApnsPush() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let bob = try await client.register(platform: "apns", handle: "B0B", user: "bob")
        let reply = try await client.send(pns: "apns", to: "bob", message: "hi")
        #expect(reply.status == 200)
        #expect(backend.pushes() == [
            DevBackend.Push(
                sequence: 1, sender: "alice", toTag: "bob", pns: "apns",
                payload: #"{"aps":{"alert":"From alice: hi"}}"#, valid: true,
                displayedText: "From alice: hi", recipients: [bob], accepted: true
            ),
        ])
    }

    /// A second copy of a send it took (its reply lost) is answered 200 and not pushed
    /// again; a key is the sender's own, and a refused push does not use it up.
    @Test func anIdempotencyKeyAlreadyTakenIsNotPushedAgain() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }
        _ = try await client.register(platform: "apns", handle: "B0B", user: "bob")
        #expect(try await client.send(pns: "apns", to: "bob", message: "once", idempotencyKey: "k1").status == 200)
        #expect(try await client.send(pns: "apns", to: "bob", message: "once", idempotencyKey: "k1").status == 200)
        #expect(backend.pushes().count == 1)
        #expect(try await client.send(pns: "apns", to: "bob", message: "once", user: "carol", idempotencyKey: "k1").status == 200)
        #expect(try await client.send(pns: "apns", to: "bob", message: "twice", idempotencyKey: "k2").status == 200)
        #expect(try await client.send(pns: "apns", to: "bob", message: "no key").status == 200)
        #expect(try await client.send(pns: "apns", to: "bob", message: "no key").status == 200)
        #expect(backend.pushes().count == 5, "carol's k1, k2 and two without a key")
        #expect(try await client.send(pns: "apns", to: "bob", message: #"say "hi""#, idempotencyKey: "k3").status == 500)
        #expect(try await client.send(pns: "apns", to: "bob", message: #"say "hi""#, idempotencyKey: "k3").status == 500, "refused again, not taken")
    }

    @Test func aQuoteBreaksTheUnescapedPayload() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        _ = try await client.register(platform: "apns", handle: "B0B", user: "bob")
        let reply = try await client.send(pns: "apns", to: "bob", message: #"say "hi""#)
        #expect(reply.status == 500)
        let push = try #require(backend.pushes().first)
        #expect(push.payload == #"{"aps":{"alert":"From alice: say "hi""}}"#)
        #expect(!push.valid && !push.accepted)
        #expect(push.displayedText == nil)
        #expect(push.recipients.isEmpty)
    }

    @Test func aClientThatEscapesForTheTutorialGetsItsTextThrough() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.send(pns: "apns", to: "bob", message: #"say \"hi\" \\ \n"#).status == 200)
        #expect(backend.pushes().first?.displayedText == "From alice: say \"hi\" \\ \n")
    }

    @Test func aFixedBackendEscapesTheTextItself() async throws {
        let backend = try startBackend(DevBackend.Options(escapesText: true, quiet: true))
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let text = "say \"hi\" \\ <b> & \u{1F600}\n"
        for pns in ["apns", "fcm", "wns"] {
            #expect(try await client.send(pns: pns, to: "bob", message: text).status == 200)
        }
        #expect(backend.pushes().map(\.displayedText) == Array(repeating: "From alice: " + text, count: 3))
        #expect(backend.pushes().allSatisfy { $0.valid })
    }

    @Test func wnsToastsBreakOnAngleBracketsAndAmpersands() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let channel = try await client.register(platform: "wns", handle: "https://wns.example/ch", user: "bob")
        #expect(try await client.send(pns: "WNS", to: "bob", message: "hi \"there\"").status == 200)
        #expect(try await client.send(pns: "wns", to: "bob", message: "a < b").status == 500)
        #expect(try await client.send(pns: "wns", to: "bob", message: "fish & chips").status == 500)
        #expect(try await client.send(pns: "wns", to: "bob", message: "fish &amp; chips").status == 200)
        let pushes = backend.pushes()
        #expect(pushes.map(\.valid) == [true, false, false, true])
        #expect(pushes[0].payload == #"<toast><visual><binding template="ToastText01"><text id="1">From alice: hi "there"</text></binding></visual></toast>"#)
        #expect(pushes[0].pns == "wns")
        #expect(pushes[0].recipients == [channel])
        #expect(pushes[3].displayedText == "From alice: fish & chips")
    }

    @Test(arguments: ["fcm", "gcm"])
    func androidPushesUseTheDataMessagePayload(pns: String) async throws {
        let backend = try startBackend(DevBackend.Options(androidPlatformName: .both, quiet: true))
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let viaFCM = try await client.register(platform: "fcm", handle: "f1", user: "bob")
        let viaGCM = try await client.register(platform: "gcm", handle: "g1", user: "bob")
        #expect(try await client.send(pns: pns, to: "bob", message: "yo").status == 200)
        let push = try #require(backend.pushes().first)
        #expect(push.payload == #"{ "data" : {"message":"From alice: yo"}}"#)
        #expect(push.displayedText == "From alice: yo")
        #expect(push.recipients == [viaFCM, viaGCM])
    }

    @Test(arguments: [("apns", 4096), ("fcm", 4096), ("wns", 5120)])
    func payloadsOverThePlatformLimitAreRejected(pns: String, limit: Int) async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.send(pns: pns, to: "bob", message: "").status == 200)
        let overhead = try #require(backend.pushes().first).payload.utf8.count
        let fitting = String(repeating: "x", count: limit - overhead)
        #expect(try await client.send(pns: pns, to: "bob", message: fitting).status == 200)
        #expect(try await client.send(pns: pns, to: "bob", message: fitting + "x").status == 500)
        let pushes = backend.pushes()
        #expect(pushes.map(\.payload.utf8.count) == [overhead, limit, limit + 1])
        #expect(pushes.map(\.valid) == [true, true, false])
    }

    @Test func pushesGoToTheUsernameTagOrTheSendersFromTagOnTheMatchingPlatform() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let bobPhone = try await client.register(platform: "apns", handle: "B1", user: "bob")
        let bobAndroid = try await client.register(platform: "fcm", handle: "B2", user: "bob")
        _ = try await client.register(platform: "apns", handle: "C1", user: "carol")
        let carolFollowing = try await client.register(platform: "apns", handle: "C2", tags: ["from:alice"], user: "carol")
        _ = try await client.register(platform: "wns", handle: "https://d", user: "bob")

        #expect(try await client.send(pns: "apns", to: "bob", message: "1").status == 200)
        #expect(try await client.send(pns: "fcm", to: "bob", message: "2").status == 200)
        #expect(try await client.send(pns: "apns", to: "nobody", message: "3", user: "dave").status == 200)
        #expect(backend.pushes().map(\.recipients) == [[bobPhone, carolFollowing], [bobAndroid], []])
        #expect(backend.pushes().map(\.sequence) == [1, 2, 3])
    }

    @Test func anUnknownPnsIsA500AndNoPush() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.send(pns: "mpns", to: "bob", message: "hi").status == 500)
        #expect(try await client.send(pns: "sms", to: "bob", message: "hi").status == 500)
        #expect(backend.pushes().isEmpty)
        #expect(backend.requestCount(route: .send) == 2)
    }

    @Test func theBodyMustBeAJSONString() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let path = "/api/notifications?pns=apns&to_tag=bob"
        #expect(try await client.request("POST", path, body: Data("hello".utf8)).status == 400)
        #expect(try await client.request("POST", path, body: Data(#"{"message":"hi"}"#.utf8)).status == 400)
        #expect(try await client.request("POST", path, body: Data(#""hi""#.utf8), contentType: "text/plain").status == 415)
        #expect(try await client.request("POST", "/api/notifications?pns=apns", body: Data(#""hi""#.utf8)).status == 404)
        #expect(backend.pushes().isEmpty)
    }
}
