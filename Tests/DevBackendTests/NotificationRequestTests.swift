import DevBackend
import Foundation
import Testing

/// `POST /api/notifications/requests`: the sample's checks, its templates filled in
/// unescaped, and who the hub sends to.
@Suite struct NotificationRequestTests {
    static let fcmv1 = #"{ "message" : { "notification" : { "title" : "PushDemo", "body" : "hi"}, "data" : { "action" : "open" } } }"#
    static let apns = #"{ "aps" : {"alert" : "hi"}, "action" : "open" }"#

    @Test func aRequestGoesToBothPlatformsThroughTheTemplates() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.putInstallation(id: "iphone", platform: "apns", tags: ["username:bob"]).status == 200)
        #expect(try await client.putInstallation(id: "pixel", platform: "fcmv1", tags: ["username:bob"]).status == 200)
        #expect(try await client.putInstallation(id: "other", platform: "apns", tags: ["username:carol"]).status == 200)
        let reply = try await client.notify(text: "hi", action: "open", tags: ["username:bob"], silent: false)
        #expect(reply.status == 200)
        #expect(reply.body.isEmpty)
        #expect(backend.notificationRequests() == [
            DevBackend.NotificationRequest(
                sequence: 1, text: "hi", action: "open", tags: ["username:bob"], silent: false,
                payloads: ["fcmv1": Self.fcmv1, "apns": Self.apns], displayedText: "hi", displayedAction: "open",
                recipients: ["iphone", "pixel"], accepted: true
            ),
        ])
        #expect(backend.requestCount(route: .notificationRequest) == 1)
    }

    @Test func silentRequestsUseTheSilentTemplates() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.notify(action: "sync", silent: true).status == 200)
        #expect(try await client.notify(text: "quiet", action: "sync", silent: true).status == 200)
        let requests = backend.notificationRequests()
        try #require(requests.count == 2)
        #expect(requests[0].payloads == [
            "fcmv1": #"{ "message" : { "data" : {"message" : "", "action" : "sync"} } }"#,
            "apns": #"{ "aps" : {"content-available" : 1, "apns-priority": 5, "sound" : "" }, "action" : "sync" }"#,
        ])
        #expect(requests[1].payloads["fcmv1"] == #"{ "message" : { "data" : {"message" : "quiet", "action" : "sync"} } }"#)
        #expect(requests[1].displayedText == "quiet")
        #expect(requests.map(\.displayedAction) == ["sync", "sync"])
        #expect(requests.allSatisfy { $0.silent && $0.accepted })
    }

    @Test func theOlderSampleSendsAndroidTheLegacyPayloads() async throws {
        let backend = try startInstallationsBackend(androidName: .fcm)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.putInstallation(id: "old", platform: "fcm").status == 200)
        #expect(try await client.notify(text: "hi", action: "open").status == 200)
        let request = try #require(backend.notificationRequests().first)
        #expect(request.payloads.keys.sorted() == ["apns", "fcm"])
        #expect(request.payloads["fcm"] == #"{ "notification" : { "title" : "PushDemo", "body" : "hi"}, "data" : { "action" : "open" } }"#)
        #expect(request.displayedText == "hi")
        #expect(request.recipients == ["old"])
    }

    @Test func tagsAreOredAndNoTagsReachEveryDevice() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.putInstallation(id: "a", platform: "apns", tags: ["x"]).status == 200)
        #expect(try await client.putInstallation(id: "b", platform: "fcmv1", tags: ["y", "z"]).status == 200)
        #expect(try await client.putInstallation(id: "c", platform: "apns", tags: []).status == 200)
        for tags in [["x"], ["y", "x"], ["nobody"], [], nil] as [[String]?] {
            #expect(try await client.notify(text: "t", action: "a", tags: tags).status == 200)
        }
        #expect(backend.notificationRequests().map(\.recipients) == [["a"], ["a", "b"], [], ["a", "b", "c"], ["a", "b", "c"]])
        #expect(backend.notificationRequests().map(\.sequence) == [1, 2, 3, 4, 5])
    }

    @Test func moreThan20TagsAreSentInBatchesWhoseUnionIsTheSame() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let tags = (0..<45).map { "t\($0)" }
        #expect(try await client.putInstallation(id: "first", tags: ["t0"]).status == 200)
        #expect(try await client.putInstallation(id: "both", tags: ["t5", "t25"]).status == 200)
        #expect(try await client.putInstallation(id: "last", tags: ["t44"]).status == 200)
        #expect(try await client.putInstallation(id: "none", tags: ["u"]).status == 200)
        #expect(try await client.notify(text: "t", action: "a", tags: tags).status == 200)
        #expect(backend.notificationRequests().first?.recipients == ["first", "both", "last"])
    }

    @Test func silentWithoutActionOrOtherwiseWithoutTextIs400() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        for reply in [
            try await client.notify(text: "hi", silent: true),
            try await client.notify(text: "hi", action: " ", silent: true),
            try await client.notify(action: "open"),
            try await client.notify(text: "", action: "open", silent: false),
            try await client.notify(text: " \t", action: "open"),
        ] {
            #expect(reply.status == 400)
            #expect(reply.body.isEmpty)
        }
        #expect(backend.notificationRequests().map(\.status) == [400, 400, 400, 400, 400])
        #expect(backend.notificationRequests().allSatisfy { !$0.accepted && $0.payloads.isEmpty && $0.recipients.isEmpty })
    }

    @Test(arguments: ["hello", "", #"{"text":"hi","action":"a","silent":"yes"}"#, #"{"text":["hi"],"action":"a"}"#])
    func aBodyThatIsNotTheModelIsA400ProblemDocument(body: String) async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.notify(json: body)
        #expect(reply.status == 400)
        #expect(reply.header("Content-Type")?.hasPrefix("application/problem+json") == true)
        #expect(backend.notificationRequests().isEmpty)
    }

    @Test func anyRequestWithoutAnActionIs422() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }
        #expect(try await client.putInstallation(id: "phone").status == 200)

        // The controller lets these through; the service's operator precedence refuses them.
        for reply in [
            try await client.notify(text: "hi"),
            try await client.notify(text: "hi", action: ""),
            try await client.notify(text: "hi", action: "  ", silent: false),
        ] {
            #expect(reply.status == 422)
            #expect(reply.body.isEmpty)
        }
        let requests = backend.notificationRequests()
        #expect(requests.map(\.status) == [422, 422, 422])
        #expect(requests.allSatisfy { !$0.accepted && $0.recipients.isEmpty && $0.refusal != nil })
    }

    @Test(arguments: [#"say "hi""#, #"back\slash"#, "two\nlines"])
    func aTextThatBreaksTheTemplateIs422(text: String) async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }
        #expect(try await client.putInstallation(id: "phone").status == 200)

        let reply = try await client.notify(text: text, action: "open")
        #expect(reply.status == 422)
        #expect(reply.body.isEmpty)
        let request = try #require(backend.notificationRequests().first)
        #expect(request.payloads["apns"] == #"{ "aps" : {"alert" : ""# + text + #""}, "action" : "open" }"#)
        #expect(!request.accepted)
        #expect(request.displayedText == nil && request.displayedAction == nil)
        #expect(request.recipients.isEmpty)
    }

    @Test func aTextTheClientEscapedArrivesAsTyped() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.notify(text: #"say \"hi\" \\ \n"#, action: #"a\"b"#).status == 200)
        let request = try #require(backend.notificationRequests().first)
        #expect(request.displayedText == "say \"hi\" \\ \n")
        #expect(request.displayedAction == "a\"b")
    }

    @Test func aFixedBackendEscapesTheTextItself() async throws {
        let backend = try startInstallationsBackend(escapesText: true)
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.notify(text: "say \"hi\" \\ \n", action: "go \"now\"").status == 200)
        let request = try #require(backend.notificationRequests().first)
        #expect(request.displayedText == "say \"hi\" \\ \n")
        #expect(request.displayedAction == "go \"now\"")
    }

    @Test func aPayloadOverFourKilobytesIs422() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        // The FCM v1 template is the longer one, so it reaches the limit first.
        #expect(try await client.notify(text: "x", action: "a").status == 200)
        let overhead = try #require(backend.notificationRequests().first?.payloads["fcmv1"]).utf8.count - 1
        let fitting = String(repeating: "x", count: 4096 - overhead)
        #expect(try await client.notify(text: fitting, action: "a").status == 200)
        #expect(try await client.notify(text: fitting + "x", action: "a").status == 422)
        let requests = backend.notificationRequests()
        #expect(requests.map { $0.payloads["fcmv1"]?.utf8.count } == [overhead + 1, 4096, 4097])
        #expect(requests.map(\.accepted) == [true, true, false])
    }

    @Test func invalidOrNullTagsAre422() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.notify(text: "hi", action: "a", tags: ["has space"]).status == 422)
        #expect(try await client.notify(json: #"{"text":"hi","action":"a","tags":null}"#).status == 422)
        #expect(backend.notificationRequests().map(\.accepted) == [false, false])
    }

    /// Beyond the sample, as on the send route: a second copy of a request the backend took
    /// (its reply was lost) is answered 200 and not pushed again; a refused one uses no key.
    @Test func anIdempotencyKeyAlreadyTakenIsNotPushedAgain() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.notify(text: "once", action: "a", idempotencyKey: "k1").status == 200)
        #expect(try await client.notify(text: "once", action: "a", idempotencyKey: "k1").status == 200)
        #expect(backend.notificationRequests().count == 1)
        #expect(try await client.notify(text: "twice", action: "a", idempotencyKey: "k2").status == 200)
        #expect(try await client.notify(text: "no key", action: "a").status == 200)
        #expect(try await client.notify(text: "no key", action: "a").status == 200)
        #expect(backend.notificationRequests().count == 4)
        #expect(try await client.notify(text: #"say "hi""#, action: "a", idempotencyKey: "k3").status == 422)
        #expect(try await client.notify(text: #"say "hi""#, action: "a", idempotencyKey: "k3").status == 422, "refused again, not taken")
        #expect(backend.notificationRequests().map(\.accepted) == [true, true, true, true, false, false])
    }
}
