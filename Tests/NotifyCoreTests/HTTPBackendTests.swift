import DevBackend
import Foundation
import NotifyProtocol
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// The real HTTP client against a loopback dev backend whose faults play a misbehaving
/// or hostile backend: redirects, malformed and huge replies, echoed credentials.
@Suite struct HTTPBackendTests {
    static let password = "pw-\(UUID().uuidString.prefix(8))"
    static let accounts = ["alice": password]

    private func account(_ server: DevBackendServer) -> BackendAccount {
        BackendAccount(baseURL: server.baseURL, user: "alice", password: Self.password)
    }

    private func withBackend<T>(_ body: (DevBackendServer, HTTPBackend) async throws -> T) async throws -> T {
        let server = DevBackendServer(options: .init(quiet: true, accounts: Self.accounts))
        try server.start()
        do {
            let result = try await body(server, HTTPBackend(settings: SettingsStore(.init(requestTimeout: 10))))
            await Self.stop(server)
            return result
        } catch {
            await Self.stop(server)
            throw error
        }
    }

    /// Waiting for the backend's threads blocks: not on the pool.
    private static func stop(_ server: DevBackendServer) async {
        _ = try? await offThePool { server.stop() }
    }

    private func statusFailure(_ result: Result<some Any, BackendCallError>) -> (status: Int, body: String)? {
        if case .failure(.status(let status, _, let body)) = result { return (status, body) }
        return nil
    }

    @Test func aRedirectIsNotFollowedAndNamesWhereItPointed() async throws {
        let elsewhere = DevBackendServer(options: .init(quiet: true, accounts: Self.accounts))
        try elsewhere.start()
        defer { elsewhere.stop() }
        let target = elsewhere.baseURL.absoluteString + "/api/register?handle=AA"
        try await withBackend { server, backend in
            for status in [301, 302, 307, 308] {
                try server.addFault(.init(route: .create, status: status, count: 1, location: target))
                let result = await backend.createRegistrationId(handle: "AA", account: account(server))
                let failure = try #require(statusFailure(result), "HTTP \(status) was not a failure")
                #expect(failure.status == status)
                #expect(failure.body.contains("redirected to \(target)"))
                #expect(failure.body.contains("change the backend URL"))
                // Retried, not refused for good: nothing is wrong with the request, but with
                // the URL, which a reload fixes; a message already accepted waits for that.
                guard case .transient(_, let reason) = BackendFailure.classify(.status(failure.status, retryAfter: nil, body: failure.body), route: .send) else {
                    Issue.record("a redirect failed what it redirected for good")
                    return
                }
                #expect(reason.hasPrefix("the backend answered HTTP \(status): redirected to \(target)"))
                #expect(reason.contains("change the backend URL"))
            }
        }
        // Not one request reached the other host, so no Authorization header either.
        #expect(elsewhere.requests().isEmpty)
    }

    @Test func aRedirectsLocationLosesItsCredentials() async throws {
        try await withBackend { server, backend in
            try server.addFault(.init(route: .send, status: 302, count: 1, location: "https://mallory:\(Self.password)@other.invalid/x"))
            let result = await backend.sendNotification(pns: "apns", toTag: "bob", body: "hi", account: account(server))
            let failure = try #require(statusFailure(result))
            #expect(failure.body.contains("https://other.invalid/x"))
            #expect(!failure.body.contains("mallory"))
            #expect(!failure.body.contains(Self.password))
        }
    }

    /// 513 nested `[` made Foundation's JSON decoder trap (SIGILL): the guard turns any
    /// depth into a failure the registration retries, and this process lives on.
    @Test(arguments: [512, 513, 514, 60_000])
    func aDeeplyNestedRegistrationReplyIsAFailureNotACrash(depth: Int) async throws {
        try await withBackend { server, backend in
            try server.addFault(.init(route: .create, status: 200, count: 1, body: String(repeating: "[", count: depth)))
            let result = await backend.createRegistrationId(handle: "AA", account: account(server))
            guard case .failure(.invalidResponse(let reason)) = result else {
                Issue.record("expected an invalid response, got \(result)")
                return
            }
            #expect(reason.contains("instead of a JSON string id"))
            #expect(reason.count < 400)
            // The backend still answers properly afterwards.
            guard case .success = await backend.createRegistrationId(handle: "AA", account: account(server)) else {
                Issue.record("the next registration failed")
                return
            }
        }
    }

    @Test(arguments: [HTTPBackend.defaultReplyLimit + 1, 3 * 1024 * 1024])
    func aReplyPastTheBoundIsRefused(size: Int) async throws {
        try await withBackend { server, backend in
            try server.addFault(.init(route: .send, status: 200, count: 1, body: String(repeating: "x", count: size)))
            let result = await backend.sendNotification(pns: "apns", toTag: "bob", body: "hi", account: account(server))
            guard case .failure(.invalidResponse(let reason)) = result else {
                Issue.record("expected a refusal, got \(result)")
                return
            }
            #expect(reason.contains("larger than 64 KiB"))
        }
    }

    @Test func aReplyUpToTheBoundIsRead() async throws {
        try await withBackend { server, backend in
            // White space is allowed around a JSON value: the id itself stays short.
            let id = "8499338226434223-7171823285547413-2"
            let body = String(repeating: " ", count: HTTPBackend.defaultReplyLimit - id.count - 2) + "\"" + id + "\""
            try server.addFault(.init(route: .create, status: 200, count: 1, body: body))
            let result = await backend.createRegistrationId(handle: "AA", account: account(server))
            #expect(body.utf8.count == HTTPBackend.defaultReplyLimit)
            #expect((try? result.get()) == id)
        }
    }

    /// The id is stored, logged, shown and put into later URLs: one that is not the
    /// conservative shape of an id, or that carries the password, is a bad reply (retried
    /// with the backoff like any other), and the reason shows neither the password nor
    /// the id's control characters, at a bounded length.
    @Test(arguments: [
        ("the password", "8499338226434223-\(password)-2"),
        ("an OSC sequence", "8499\u{1B}]0;owned\u{07}-2"),
        ("a forged log line", "8499-2\n2026-01-01T00:00:00Z notifyd[1] notice: logged in as root"),
        ("60 KB", String(repeating: "7", count: 60_000)),
        ("a slash", "../../api/notifications"),
        ("nothing", ""),
        ("C1 and DEL", "8499\u{9B}2J\u{7F}"),
    ])
    func anIdOfTheWrongShapeIsABadReply(what: String, id: String) async throws {
        try await withBackend { server, backend in
            let body = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
            try server.addFault(.init(route: .create, status: 200, count: 1, body: body))
            let result = await backend.createRegistrationId(handle: "AA", account: account(server))
            guard case .failure(.invalidResponse(let reason)) = result else {
                Issue.record("an id with \(what) was taken: \(result)")
                return
            }
            #expect(reason.contains("the backend answered the registration request with"))
            #expect(reason.contains("neither used nor kept"))
            #expect(!reason.contains(Self.password))
            #expect(!reason.unicodeScalars.contains { PrintableText.isControl($0) })
            #expect(reason.count < 400)
            guard case .transient = BackendFailure.classify(.invalidResponse(reason), route: .create) else {
                Issue.record("a bad id is not retried with the backoff")
                return
            }
        }
    }

    @Test(arguments: ["8499338226434223-7171823285547413-2", "a.b_C-9", String(repeating: "7", count: RegistrationID.maximumLength)])
    func anIdOfTheRightShapeIsTaken(id: String) async throws {
        try await withBackend { server, backend in
            try server.addFault(.init(route: .create, status: 200, count: 1, body: "\"" + id + "\""))
            let result = await backend.createRegistrationId(handle: "AA", account: account(server))
            #expect((try? result.get()) == id)
        }
    }

    @Test func anErrorBodyEchoingTheRequestKeepsNoCredentials() async throws {
        try await withBackend { server, backend in
            try server.addFault(.init(route: .upsert, status: 400, count: 1, echoHeaders: true))
            let result = await backend.upsertRegistration(id: "x", platform: "apns", handle: "AA", tags: [], account: account(server))
            let failure = try #require(statusFailure(result))
            let basic = Data("alice:\(Self.password)".utf8).base64EncodedString()
            #expect(failure.body.contains("Authorization: Basic [redacted]"))
            #expect(!failure.body.contains(basic))
            #expect(!failure.body.contains(Self.password))
            #expect(!failure.body.contains("\n"))
            #expect(failure.body.count <= BackendText.maximumLength + 1)
        }
    }

    /// A failure the network may explain is told from one that is the backend's: notifyd
    /// judges the first against what it knows of the network (`BackendRecovery.classify`).
    @Test func noRouteToTheBackendIsToldFromABackendThatIsDown() async throws {
        let backend = HTTPBackend(settings: SettingsStore(.init(allowInsecureHTTP: true, requestTimeout: 5)))
        let unroutable = BackendAccount(baseURL: URL(string: "http://224.0.0.1:9")!, user: "alice", password: Self.password)
        let result = await backend.sendNotification(pns: "apns", toTag: "bob", body: "hi", account: unroutable)
        guard case .failure(.unreachable(let reason, let noRoute, _)) = result else {
            Issue.record("expected no route, got \(result)")
            return
        }
        #expect(noRoute)
        #expect(reason == "cannot connect to http://224.0.0.1:9: no route to the host (the network is unreachable)")

        // A port held bound without listening: refused, and no other test's server can be
        // given it meanwhile (a server stopped for this once was, and answered).
        #if canImport(Darwin)
        let server = DevBackendServer(options: .init(quiet: true))
        try server.start()
        let closed = BackendAccount(baseURL: server.baseURL, user: "alice", password: Self.password)
        server.stop()
        #else
        let held = try LoopbackSocket(listening: false)
        defer { held.close() }
        let closed = BackendAccount(baseURL: URL(string: held.url)!, user: "alice", password: Self.password)
        #endif
        let refused = await backend.sendNotification(pns: "apns", toTag: "bob", body: "hi", account: closed)
        guard case .failure(.cannotConnect(let refusal, tls: false)) = refused else {
            Issue.record("expected a refused connection, got \(refused)")
            return
        }
        #expect(refusal.hasSuffix("connection refused"))
    }

    #if !canImport(Darwin)
    /// https:// for the plain dev backend, the likeliest slip of a first setup: the failure
    /// names the URL to use, and comes at once (the dev backend answers the handshake).
    @Test func anHTTPSURLForAPlainServerSaysToUseHTTP() async throws {
        try await withBackend { server, backend in
            let plain = server.baseURL.absoluteString
            let https = URL(string: "https" + plain.dropFirst("http".count))!
            let result = await backend.sendNotification(pns: "apns", toTag: "bob", body: "hi", account: BackendAccount(baseURL: https, user: "alice", password: Self.password))
            guard case .failure(.cannotConnect(let reason, tls: true)) = result else {
                Issue.record("expected a TLS failure, got \(result)")
                return
            }
            #expect(reason.hasPrefix("cannot connect to \(https.absoluteString): TLS failed ("))
            #expect(reason.hasSuffix("; the server did not answer in TLS: if it speaks plain HTTP, as notify-devbackend does, use \(plain)"))
            #expect(!reason.contains(Self.password))
            #expect(server.requests().isEmpty)
        }
    }
    #endif

    @Test func plainHTTPToAnotherHostIsNotEvenAttempted() async throws {
        let backend = HTTPBackend(settings: SettingsStore(.init(requestTimeout: 5)))
        let remote = BackendAccount(baseURL: URL(string: "http://backend.invalid")!, user: "alice", password: Self.password)
        let result = await backend.sendNotification(pns: "apns", toTag: "bob", body: "hi", account: remote)
        guard case .failure(.transport(let reason)) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
        #expect(reason.contains("use https://"))
    }
}
