import DevBackend
import Foundation
import Testing

@Suite struct HTTPServerTests {
    private let auth = "Authorization: Basic YWxpY2U6YWxpY2U=\r\n"  // alice:alice

    @Test func urlSessionReusesOneConnectionForSequentialRequests() async throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = BackendClient(backend)
        defer { client.close() }

        #expect(try await client.create().status == 200)
        #expect(try await client.send(pns: "apns", to: "bob", message: "hi").status == 200)
        #expect(try await client.create().status == 200)
        #expect(backend.acceptedConnections == 1)
    }

    @Test func twoRequestsOnOneRawConnectionAndConnectionCloseIsHonoured() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let raw = try RawHTTPClient(port: backend.port)

        try raw.send("POST /api/register HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 0\r\n\r\n")
        let first = try raw.readResponse()
        #expect(first.status == 200)
        #expect(first.header("Connection") == nil)
        try raw.send("POST /api/register HTTP/1.1\r\nHost: x\r\n\(auth)Connection: close\r\n\r\n")
        let second = try raw.readResponse()
        #expect(second.status == 200)
        #expect(second.header("Connection") == "close")
        #expect(try raw.isClosedByServer())
        #expect(backend.acceptedConnections == 1)
        #expect(backend.requestCount(route: .create) == 2)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let raw = try RawHTTPClient(port: backend.port)

        let body = #""hi""#
        try raw.send(
            "POST /api/register HTTP/1.1\r\nHost: x\r\n\(auth)\r\n"
                + "POST /api/notifications?pns=apns&to_tag=bob HTTP/1.1\r\nHost: x\r\n\(auth)"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                + "GET /nowhere HTTP/1.1\r\nhost: x\r\nAUTHORIZATION: basic YWxpY2U6YWxpY2U=\r\n\r\n"
        )
        #expect(try raw.readResponse().status == 200)
        #expect(try raw.readResponse().status == 200)
        #expect(try raw.readResponse().status == 404)
        #expect(backend.pushes().first?.displayedText == "From alice: hi")
    }

    @Test func expect100ContinueGetsAnInterimResponseBeforeTheBody() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let raw = try RawHTTPClient(port: backend.port)

        let body = #""hello there""#
        try raw.send(
            "POST /api/notifications?pns=apns&to_tag=bob HTTP/1.1\r\nHost: x\r\n\(auth)"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Expect: 100-continue\r\n\r\n"
        )
        let interim = try raw.readResponse()
        #expect(interim.status == 100)
        try raw.send(body)
        let final = try raw.readResponse()
        #expect(final.status == 200)
        #expect(backend.pushes().first?.displayedText == "From alice: hello there")
    }

    @Test func aChunkedBodyIsReassembled() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let client = try RawHTTPClient(port: backend.port)

        try client.send("POST /api/register HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 0\r\n\r\n")
        let id = try JSONDecoder().decode(String.self, from: Data(try client.readResponse().body))
        let json = #"{"Platform":"apns","Handle":"CAFE","Tags":["from:alice"]}"#
        let bytes = Array(json.utf8)
        let parts = [bytes[0..<10], bytes[10..<31], bytes[31...]]
        var chunked = ""
        for part in parts {
            chunked += String(part.count, radix: 16) + ";ext=1\r\n" + String(decoding: part, as: UTF8.self) + "\r\n"
        }
        chunked += "0\r\nX-Trailer: yes\r\n\r\n"
        try client.send(
            "PUT /api/register/\(id) HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + chunked
        )
        #expect(try client.readResponse().status == 200)
        #expect(backend.registrations().first?.handle == "CAFE")
        // The connection is still usable after the chunked body.
        try client.send("DELETE /api/register/\(id) HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
        #expect(try client.readResponse().status == 200)
    }

    /// A raw request named in one line, so that `swift test` prints one line per case
    /// instead of the request's CRLFs.
    struct RawRequest: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        RawRequest(name: "not HTTP", text: "GARBAGE\r\n\r\n"),
        RawRequest(name: "a header without a colon", text: "GET /api/register HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n"),
        RawRequest(name: "no Host", text: "GET /api/register HTTP/1.1\r\n\r\n"),
        RawRequest(name: "two spaces in the request line", text: "GET  /api/register HTTP/1.1\r\nHost: x\r\n\r\n"),
        RawRequest(name: "a Content-Length that is not a number", text: "POST /api/register HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"),
        RawRequest(name: "both Content-Length and chunked", text: "POST /api/register HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
        RawRequest(name: "a chunk size that is not hex", text: "POST /api/register HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        RawRequest(name: "a folded header", text: "GET /api/register HTTP/1.1\r\nHost: x\r\n folded: header\r\n\r\n"),
    ])
    func malformedRequestsGetA400AndTheConnectionCloses(request: RawRequest) throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let raw = try RawHTTPClient(port: backend.port)

        try raw.send(request.text)
        let response = try raw.readResponse()
        #expect(response.status == 400)
        #expect(response.header("Connection") == "close")
        #expect(!response.text.isEmpty)
        #expect(try raw.isClosedByServer())
        #expect(backend.requests().isEmpty)
    }

    @Test func oversizedBodiesAndHeadsAreRefused() throws {
        let backend = try startBackend()
        defer { backend.stop() }

        let big = try RawHTTPClient(port: backend.port)
        try big.send("POST /api/register HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n")
        #expect(try big.readResponse().status == 413)

        let head = try RawHTTPClient(port: backend.port)
        try head.send("GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + String(repeating: "a", count: 70_000) + "\r\n\r\n")
        #expect(try head.readResponse().status == 431)

        let version = try RawHTTPClient(port: backend.port)
        try version.send("GET / HTTP/2.0\r\nHost: x\r\n\r\n")
        #expect(try version.readResponse().status == 505)
    }

    /// A client given https:// for this plain server opens with a TLS handshake record:
    /// answered at once (a TLS client reads it as "wrong version number") instead of
    /// waiting for a request head that never comes.
    @Test func aTLSHandshakeIsAnsweredAtOnceWithTheURLToUse() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let raw = try RawHTTPClient(port: backend.port)
        // The first bytes of a ClientHello: a handshake record (0x16) of TLS 1.0's record version.
        try raw.send("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}")
        let response = try raw.readResponse()
        #expect(response.status == 400)
        #expect(response.text.contains("plain HTTP, not TLS: use http://"))
        #expect(try raw.isClosedByServer())
        #expect(backend.requests().isEmpty)
    }

    @Test func headAnswersCarryNoBody() throws {
        let backend = try startBackend()
        defer { backend.stop() }
        let raw = try RawHTTPClient(port: backend.port)

        try raw.send("HEAD /nowhere HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
        let head = try raw.readHead()
        #expect(head.status == 404)
        #expect(Int(head.header("Content-Length") ?? "0") ?? 0 > 0)
        // The next response follows directly: no body bytes were sent in between.
        try raw.send("POST /api/register HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
        #expect(try raw.readResponse().status == 200)
    }

    @Test func http10ClosesUnlessAskedToKeepAlive() throws {
        let backend = try startBackend()
        defer { backend.stop() }

        let plain = try RawHTTPClient(port: backend.port)
        try plain.send("POST /api/register HTTP/1.0\r\n\(auth)\r\n")
        #expect(try plain.readResponse().status == 200)
        #expect(try plain.isClosedByServer())

        let kept = try RawHTTPClient(port: backend.port)
        try kept.send("POST /api/register HTTP/1.0\r\n\(auth)Connection: keep-alive\r\n\r\n")
        let response = try kept.readResponse()
        #expect(response.header("Connection") == "keep-alive")
        try kept.send("POST /api/register HTTP/1.0\r\n\(auth)\r\n")
        #expect(try kept.readResponse().status == 200)
    }
}
