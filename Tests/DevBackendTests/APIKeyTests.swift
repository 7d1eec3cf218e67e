import DevBackend
import Foundation
import Testing

/// The backend service's API key: the `apikey` header, or the `apikey` query value.
@Suite struct APIKeyTests {
    static let routes: [(method: String, path: String, body: String?)] = [
        ("PUT", "/api/notifications/installations", #"{"installationId":"i","platform":"apns","pushChannel":"T"}"#),
        ("DELETE", "/api/notifications/installations/i", nil),
        ("POST", "/api/notifications/requests", #"{"text":"hi","action":"a"}"#),
    ]

    @Test func aMissingOrWrongKeyIs401WithAnEmptyBodyOnEveryRoute() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        for route in Self.routes {
            let body = route.body.map { Data($0.utf8) }
            for key in [nil, "wrong", testAPIKey.uppercased(), " "] as [String?] {
                let reply = try await client.installationRequest(route.method, route.path, key: key, body: body)
                #expect(reply.status == 401, "\(route.method) \(route.path) with key \(key ?? "none")")
                #expect(reply.body.isEmpty)
                #expect(reply.header("WWW-Authenticate") == nil)
            }
            // Basic authentication is no way in here.
            let basic = try await client.request(route.method, route.path, body: body)
            #expect(basic.status == 401)
        }
        #expect(backend.installations().isEmpty)
        #expect(backend.notificationRequests().isEmpty)
        #expect(backend.requests().allSatisfy { $0.status == 401 && $0.user == nil })
    }

    @Test func theRightKeyPasses() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        for route in Self.routes {
            let body = route.body.map { Data($0.utf8) }
            let reply = try await client.installationRequest(route.method, route.path, body: body)
            #expect(reply.status == 200, "\(route.method) \(route.path)")
        }
        #expect(backend.notificationRequests().count == 1)
    }

    @Test(arguments: ["apikey", "ApiKey", "APIKEY"])
    func theHeaderNameIgnoresCase(name: String) async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.installationRequest("DELETE", "/api/notifications/installations/i", key: nil, headers: [name: testAPIKey])
        #expect(reply.status == 200)
    }

    @Test func theQueryKeyIsReadWhenThereIsNoHeader() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let path = "/api/notifications/installations/i?apikey=" + client.percentEncoded(testAPIKey)
        #expect(try await client.installationRequest("DELETE", path, key: nil).status == 200)
        #expect(try await client.installationRequest("DELETE", "/api/notifications/installations/i?apikey=nope", key: nil).status == 401)
        // A header, even a wrong one, is read first.
        #expect(try await client.installationRequest("DELETE", path, key: "wrong").status == 401)
        // The request log keeps the path only.
        #expect(backend.requests().map(\.path) == Array(repeating: "/api/notifications/installations/i", count: 3))
    }
}

/// Each backend serves one dialect; the other's routes answer 404, so that a client can tell
/// its user that it was pointed at the other kind of backend.
@Suite struct DialectTests {
    @Test func anInstallationsBackendAnswersTheRegistrationRoutes404() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }
        // Not even a fault covering every route applies to a route the backend does not have.
        try backend.addFault(DevBackend.FaultRule(route: .any, status: 503))

        let calls: [(String, String, Data?)] = [
            ("POST", "/api/register?handle=AB", nil),
            ("POST", "/api/register", nil),
            ("PUT", "/api/register/1", Data(#"{"Platform":"apns","Handle":"AB","Tags":[]}"#.utf8)),
            ("DELETE", "/api/register/1", nil),
            ("POST", "/api/notifications?pns=apns&to_tag=bob", Data(#""hi""#.utf8)),
        ]
        for (method, path, body) in calls {
            for key in [testAPIKey, nil] as [String?] {
                let reply = try await client.installationRequest(method, path, key: key, body: body)
                #expect(reply.status == 404, "\(method) \(path)")
                #expect(reply.body.isEmpty)
            }
            let basic = try await client.request(method, path, body: body)
            #expect(basic.status == 404, "\(method) \(path) with Basic authentication")
        }
        #expect(backend.requests().allSatisfy { $0.status == 404 && $0.route == nil })
        #expect(backend.requestCount(route: .send) == 0)
        #expect(backend.registrations().isEmpty && backend.pushes().isEmpty)
    }

    @Test func aRegistrationsBackendAnswersTheInstallationRoutes404() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        for route in APIKeyTests.routes {
            let body = route.body.map { Data($0.utf8) }
            // As the other dialect's client calls: a key, no Basic authentication.
            let keyed = try await client.installationRequest(route.method, route.path, body: body)
            #expect(keyed.status == 404, "\(route.method) \(route.path)")
            let basic = try await client.request(route.method, route.path, body: body)
            #expect(basic.status == 404, "\(route.method) \(route.path) with Basic authentication")
        }
        // The registrations routes still want Basic authentication.
        #expect(try await client.request("POST", "/api/register", authorization: nil).status == 500)
        #expect(backend.requestCount(route: .installationUpsert) == 0)
        #expect(backend.requestCount(route: .notificationRequest) == 0)
        #expect(backend.requests().map(\.route).allSatisfy { $0 == nil || $0 == .create })
    }

    @Test func anInstallationsBackendAnswersUnknownRoutes404WithoutAKey() async throws {
        let backend = try startInstallationsBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.installationRequest("GET", "/api/values", key: nil).status == 404)
        #expect(try await client.installationRequest("POST", "/api/notifications/installations", key: testAPIKey).status == 404)
        #expect(try await client.installationRequest("DELETE", "/api/notifications/installations", key: testAPIKey).status == 404)
    }
}
