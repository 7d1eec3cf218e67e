import DevBackend
import Foundation
import NotifyTestSupport
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A reply as the tests need it: status, headers by case-insensitive name, body.
struct Reply: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Talks to one in-process backend through URLSession, as a real client would.
struct BackendClient: Sendable {
    let backend: DevBackendServer
    let session: URLSession

    init(_ backend: DevBackendServer, timeout: TimeInterval = 30) {
        self.backend = backend
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
    }

    func close() {
        session.invalidateAndCancel()
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// `pathAndQuery` is sent as written, so tests control the percent-encoding.
    func request(
        _ method: String, _ pathAndQuery: String,
        authorization: String? = BackendClient.basic("alice", "alice"),
        body: Data? = nil, contentType: String? = "application/json", headers extra: [String: String] = [:]
    ) async throws -> Reply {
        var request = URLRequest(url: URL(string: backend.baseURL.absoluteString + pathAndQuery)!)
        request.httpMethod = method
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        }
        let (data, response) = try await Self.send(request, on: session)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            headers["\(key)"] = "\(value)"
        }
        return Reply(status: http.statusCode, headers: headers, body: data)
    }

    /// On a thread of its own: FoundationNetworking's URLSession waits on its own queue
    /// (`DispatchQueue.sync`) when a task starts, and on a busy machine that wait kept the
    /// concurrency pool's threads from every other test for seconds.
    private static func send(_ request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        try await offThePool {
            let done = DispatchSemaphore(value: 0)
            let outcome = Mutex<Result<(Data, URLResponse), any Error>?>(nil)
            session.dataTask(with: request) { data, response, error in
                outcome.withLock { $0 = Result {
                    guard let response else { throw error ?? URLError(.badServerResponse) }
                    return (data ?? Data(), response)
                } }
                done.signal()
            }.resume()
            done.wait()
            return try outcome.withLock { $0! }.get()
        }
    }

    /// `POST /api/register[?handle=…]`; the handle is percent-encoded here.
    func create(handle: String? = nil, user: String = "alice") async throws -> Reply {
        var path = "/api/register"
        if let handle { path += "?handle=" + percentEncoded(handle) }
        return try await request("POST", path, authorization: Self.basic(user, user))
    }

    /// A create that must succeed; returns the id parsed from the JSON string body.
    func createID(handle: String? = nil, user: String = "alice") async throws -> String {
        let reply = try await create(handle: handle, user: user)
        try #require(reply.status == 200)
        return try JSONDecoder().decode(String.self, from: reply.body)
    }

    func upsert(id: String, platform: String, handle: String, tags: [String]?, user: String = "alice") async throws -> Reply {
        var fields: [String: Any] = ["Platform": platform, "Handle": handle]
        fields["Tags"] = tags.map { $0 as Any } ?? NSNull()
        let body = try JSONSerialization.data(withJSONObject: fields)
        return try await request("PUT", "/api/register/\(id)", authorization: Self.basic(user, user), body: body)
    }

    /// Create plus upsert; returns the id of the stored registration.
    func register(platform: String, handle: String, tags: [String] = [], user: String = "alice") async throws -> String {
        let id = try await createID(handle: handle, user: user)
        let reply = try await upsert(id: id, platform: platform, handle: handle, tags: tags, user: user)
        try #require(reply.status == 200)
        return id
    }

    func send(pns: String, to tag: String, message: String, user: String = "alice", idempotencyKey: String? = nil) async throws -> Reply {
        let body = try JSONEncoder().encode(message)
        return try await request(
            "POST", "/api/notifications?pns=\(percentEncoded(pns))&to_tag=\(percentEncoded(tag))",
            authorization: Self.basic(user, user), body: body, headers: idempotencyKey.map { ["Idempotency-Key": $0] } ?? [:]
        )
    }

    func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed)!
    }
}

/// A started backend that tests must stop (with `defer`).
func startBackend(_ options: DevBackend.Options = DevBackend.Options(quiet: true)) throws -> DevBackendServer {
    let backend = DevBackendServer(options: options)
    try backend.start()
    return backend
}
