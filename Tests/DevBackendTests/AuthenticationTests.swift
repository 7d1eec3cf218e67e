import DevBackend
import Foundation
import Testing

@Suite struct AuthenticationTests {
    @Test func missingAuthorizationHeaderMakesTheHandlerThrow() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.request("POST", "/api/register", authorization: nil)
        #expect(reply.status == 500)
        #expect(backend.registrations().isEmpty)
    }

    @Test func userDifferentFromPasswordIsForbiddenWithoutChallenge() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let reply = try await client.request("POST", "/api/register", authorization: BackendClient.basic("alice", "secret"))
        #expect(reply.status == 403)
        #expect(reply.header("WWW-Authenticate") == nil)
        #expect(reply.body.isEmpty)
    }

    @Test func aPasswordContainingAColonIsCutShort() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        // "alice:alice:extra" splits into alice / alice / extra; only the first two count.
        let cut = try await client.request("POST", "/api/register", authorization: BackendClient.basic("alice", "alice:extra"))
        #expect(cut.status == 200)
        let wrong = try await client.request("POST", "/api/register", authorization: BackendClient.basic("alice", "x:alice"))
        #expect(wrong.status == 403)
        #expect(backend.requests().map(\.user) == ["alice", nil])
    }

    @Test func credentialsWithoutAColonOrInvalidBase64MakeTheHandlerThrow() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        let noColon = "Basic " + Data("alice".utf8).base64EncodedString()
        #expect(try await client.request("POST", "/api/register", authorization: noColon).status == 500)
        #expect(try await client.request("POST", "/api/register", authorization: "Basic !!!").status == 500)
        #expect(try await client.request("POST", "/api/register", authorization: "Bearer abc").status == 403)
        #expect(try await client.request("POST", "/api/register", authorization: "basic YWxpY2U6YWxpY2U=").status == 200)
    }

    @Test func unknownRoutesAnswer404OnlyAfterAuthentication() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.request("GET", "/api/values").status == 404)
        #expect(try await client.request("GET", "/api/values", authorization: nil).status == 500)
        #expect(try await client.request("GET", "/", authorization: BackendClient.basic("a", "b")).status == 403)
        #expect(backend.requests().map(\.route) == [nil, nil, nil])
    }
}
