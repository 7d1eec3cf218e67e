#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCoding
import NotifyProtocol
import Synchronization

/// The tutorial AppBackend over HTTP(S): connections are reused, at most
/// `max_connections` to the backend. Redirects are not followed and replies are bounded
/// (see `HTTPTransport`); text from the backend is scrubbed before it is kept.
public final class HTTPBackend: BackendAPI {
    /// The contract's replies are a short JSON string or nothing; anything past this is refused.
    public static let defaultReplyLimit = 64 * 1024

    private let transport: any HTTPTransport
    private let replyLimit: Int
    /// Read at each request: `request_timeout`, `max_connections`, `allow_insecure_http`.
    private let settings: SettingsStore
    /// The URL the last request was built for, and from what: a lane's messages all go to
    /// one, which is then built once, not once per message.
    private let lastTarget = Mutex<Target?>(nil)

    private struct Target {
        var base: URL
        var path: String
        var query: [(String, String)]
        var allowInsecureHTTP: Bool
        var url: Result<URL, BackendCallError>

        /// Byte for byte: Swift's `==` calls canonically equivalent texts equal ("café"
        /// composed and decomposed), which are two recipients at the backend.
        func isFor(_ base: URL, _ path: String, _ query: [(String, String)], _ allowInsecureHTTP: Bool) -> Bool {
            self.allowInsecureHTTP == allowInsecureHTTP && Self.same(self.path, path) && self.query.count == query.count
                && zip(self.query, query).allSatisfy { Self.same($0.0, $1.0) && Self.same($0.1, $1.1) } && self.base == base
        }

        private static func same(_ one: String, _ other: String) -> Bool {
            one.utf8.elementsEqual(other.utf8)
        }
    }

    public init(settings: SettingsStore, replyLimit: Int = HTTPBackend.defaultReplyLimit) {
        #if canImport(Darwin)
        transport = URLSessionTransport(settings: settings, replyLimit: replyLimit)
        #else
        transport = CurlTransport(settings: settings, replyLimit: replyLimit)
        #endif
        self.replyLimit = replyLimit
        self.settings = settings
    }

    deinit {
        transport.invalidate()
    }

    public func networkChanged() {
        transport.networkChanged()
    }

    public func createRegistrationId(handle: String, account: BackendAccount) async -> Result<String, BackendCallError> {
        // The backend service has the device choose the id: nothing to ask for.
        if account.api == .installations { return .success(InstallationRoutes.newInstallationId()) }
        let result = await call("POST", "api/register", query: [("handle", handle)], body: nil, account: account)
        return result.flatMap { body in
            // The body is a JSON string; parse it rather than trimming quotes, so escapes survive.
            guard let id = try? WireCoding.decodeChecked(String.self, from: body, decoder: JSONDecoder()) else {
                return .failure(.invalidResponse("the backend answered the registration request with \(Self.describe(body, account: account)) instead of a JSON string id"))
            }
            // A bad reply like any other: retried with the backoff, never stored.
            if let problem = RegistrationID.problem(id, account: account) {
                return .failure(.invalidResponse("the backend answered the registration request with \(problem)"))
            }
            return .success(id)
        }
    }

    public func upsertRegistration(id: String, platform: String, handle: String, tags: [String], account: BackendAccount) async -> Result<Void, BackendCallError> {
        if account.api == .installations {
            let body = InstallationRoutes.installationBody(id: id, platform: platform, pushChannel: handle, tags: tags, user: account.user)
            return await call("PUT", InstallationRoutes.installations, query: [], body: body, account: account).map { _ in () }
        }
        let registration = RegistrationBody(platform: platform, handle: handle, tags: tags)
        let body = (try? JSONEncoder().encode(registration)) ?? Data()
        return await call("PUT", "api/register/" + URLText.escape(id), query: [], body: body, account: account).map { _ in () }
    }

    public func deleteRegistration(id: String, account: BackendAccount) async -> Result<Void, BackendCallError> {
        let path = account.api == .installations ? InstallationRoutes.installation(id) : "api/register/" + URLText.escape(id)
        return await call("DELETE", path, query: [], body: nil, account: account).map { _ in () }
    }

    public func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount, idempotencyKey: String?) async -> Result<Void, BackendCallError> {
        let (path, query, encoded) = Self.sendRequest(pns: pns, toTag: toTag, body: body, api: account.api)
        return await call("POST", path, query: query, body: encoded, account: account, idempotencyKey: idempotencyKey).map { _ in () }
    }

    /// Where a send goes, and its body: for the AppBackend the text as one JSON string, to
    /// `pns` and `to_tag`; for the backend service `body` is the whole notification request.
    private static func sendRequest(pns: String, toTag: String, body: String, api: BackendDialect) -> (String, [(String, String)], Data) {
        switch api {
        case .registrations: ("api/notifications", [("pns", pns), ("to_tag", toTag)], jsonString(body))
        case .installations: (InstallationRoutes.requests, [], Data(body.utf8))
        }
    }

    /// Where the transport keeps lanes (libcurl's thread).
    public var lanes: (any BackendLanes)? { transport.lanes.map { SendLanes(backend: self, transport: $0) } }

    public var requestsPerConnection: Int { transport.requestsPerConnection }

    /// Sends handed to the transport's lanes.
    private struct SendLanes: BackendLanes {
        let backend: HTTPBackend
        let transport: any HTTPLanes

        func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount, idempotencyKey: String?, lane: UInt64,
                              then: @escaping @Sendable (Result<Void, BackendCallError>) -> Void) {
            let (path, query, encoded) = HTTPBackend.sendRequest(pns: pns, toTag: toTag, body: body, api: account.api)
            switch backend.request("POST", path, query: query, body: encoded, account: account, idempotencyKey: idempotencyKey) {
            case .failure(let error):
                // Not handed over: the requests after it in the lane must not go either.
                transport.breakLane(lane)
                then(.failure(error))
            case .success(let request):
                let backend = self.backend
                transport.perform(request, lane: lane) { outcome in
                    let result = HTTPBackend.interpret(outcome, account: account, replyLimit: backend.replyLimit)
                    guard let status = HTTPBackend.statusSuggestingOtherAPI(result, account: account, path: path) else {
                        then(result.map { _ in () })
                        return
                    }
                    // Rare (a backend of the other kind), and off the HTTP thread: the probe waits for an answer.
                    Task { then(await backend.namingOtherAPI(result, status: status, account: account).map { _ in () }) }
                }
            }
        }

        func endLane(_ lane: UInt64) {
            transport.endLane(lane)
        }
    }

    /// The body of a send: the text as one JSON string, as `JSONEncoder().encode(text)` writes it.
    static func jsonString(_ text: String) -> Data {
        var json = JSONTextWriter(pretty: false, escapingSlashes: true, capacity: text.utf8.count + 16)
        json.string(text)
        return Data(json.bytes)
    }

    /// `POST /api/register` without a handle: the tutorial's controller then only reserves a
    /// registration id (no registration is looked up, made or deleted), and every AppBackend
    /// authenticates it. Any 2xx is an acceptance; the id is not needed.
    ///
    /// At the backend service: the DELETE of an installation id no device has, which needs
    /// the key and changes nothing (a 422 is the hub's failure, after the key was accepted).
    public func checkCredentials(account: BackendAccount) async -> Result<Void, BackendCallError> {
        guard account.api == .installations else {
            return await call("POST", "api/register", query: [], body: nil, account: account).map { _ in () }
        }
        switch await call("DELETE", InstallationRoutes.installation(InstallationRoutes.loginCheckId()), query: [], body: nil, account: account) {
        case .success, .failure(.status(422, _, _)): return .success(())
        case .failure(let error): return .failure(error)
        }
    }

    /// Connects to `backend` and sends nothing: a TCP connect to its host and port, with a
    /// TLS handshake when `tls` (an https backend whose handshake failed). The connection is
    /// a fresh one, closed at once, so a pooled connection cannot answer for the backend.
    public var probes: Bool { transport.connectsOnly }

    public func probe(_ backend: String, tls: Bool) async -> Bool {
        guard transport.connectsOnly, let url = Self.probeURL(backend, tls: tls) else { return false }
        let outcome = await transport.perform(HTTPRequest(method: "GET", url: url, headers: [], body: nil, connectOnly: true))
        if case .response = outcome { return true }
        return false
    }

    /// The backend's URL, or, without `tls`, a plain http URL of its host and port: libcurl
    /// then only connects.
    static func probeURL(_ backend: String, tls: Bool) -> URL? {
        guard var parts = URLComponents(string: backend), let scheme = parts.scheme?.lowercased(), parts.host != nil else { return nil }
        parts.user = nil
        parts.password = nil
        parts.path = "/"
        parts.query = nil
        parts.fragment = nil
        if scheme == "https" && !tls {
            parts.port = parts.port ?? 443
            parts.scheme = "http"
        }
        return parts.url
    }

    private func call(_ method: String, _ path: String, query: [(String, String)], body: Data?, account: BackendAccount,
                      idempotencyKey: String? = nil) async -> Result<Data, BackendCallError> {
        switch request(method, path, query: query, body: body, account: account, idempotencyKey: idempotencyKey) {
        case .failure(let error):
            return .failure(error)
        case .success(let request):
            let result = Self.interpret(await transport.perform(request), account: account, replyLimit: replyLimit)
            guard let status = Self.statusSuggestingOtherAPI(result, account: account, path: path) else { return result }
            return await namingOtherAPI(result, status: status, account: account)
        }
    }

    /// The status of a failure that a backend of the other API would give on this route:
    /// a 404 where the AppBackend's route is missing; a 404 or a 500 at the backend service's
    /// routes (the AppBackend's authentication throws on a request without Basic auth).
    /// A 404 or 500 to an AppBackend registration id is about that id, not the API.
    private static func statusSuggestingOtherAPI(_ result: Result<Data, BackendCallError>, account: BackendAccount, path: String) -> Int? {
        guard case .failure(.status(let status, _, _)) = result else { return nil }
        switch account.api {
        case .registrations: return status == 404 && (path == "api/register" || path == "api/notifications") ? status : nil
        case .installations: return status == 404 || status == 500 ? status : nil
        }
    }

    /// `result`, or when the other API's routes answer at this backend, a refusal that says
    /// to set `backend_api`. The probe carries no secret: the other API's route is asked
    /// without credentials (the backend service answers 401 to a route it has) or with a
    /// made-up user (the AppBackend answers 401 or 403 to it). Only those answers name the
    /// other API: the AppBackend answers a request without Basic auth with 500, on any
    /// route, so a wrong path at an AppBackend once read as a backend service.
    private func namingOtherAPI(_ result: Result<Data, BackendCallError>, status: Int, account: BackendAccount) async -> Result<Data, BackendCallError> {
        let other: BackendDialect = account.api == .registrations ? .installations : .registrations
        var probe = account
        probe.api = other
        probe.user = "notifyd-api-probe"
        probe.password = InstallationRoutes.loginCheckId()
        let (method, path, body): (String, String, Data?) = switch other {
        case .registrations: ("POST", "api/register", nil)
        case .installations: ("PUT", InstallationRoutes.installations, Data("{}".utf8))
        }
        guard case .success(var request) = request(method, path, query: [], body: body, account: probe) else { return result }
        // The backend service is asked with no key at all.
        if other == .installations { request.headers.removeAll { $0.hasPrefix("apikey:") } }
        let namesOther: Set<Int> = other == .installations ? [401] : [401, 403]
        if case .response(let answer, _, _, _) = await transport.perform(request), namesOther.contains(answer) {
            return .failure(.otherAPI(status: status, suggestion: Self.otherAPISuggestion(other)))
        }
        // Neither API's route is there: most likely the URL's path is wrong.
        guard status == 404, case .failure(.status(let status, let retryAfter, let body)) = result else { return result }
        let said = body.isEmpty ? "" : " (\(body))"
        return .failure(.status(status, retryAfter: retryAfter, body: "no such route at \(account.baseURL.absoluteString)\(said): check the backend URL, its path especially"))
    }

    static func otherAPISuggestion(_ api: BackendDialect) -> String {
        switch api {
        case .installations:
            BackendFailure.otherAPIPrefix + " the backend service of Microsoft's newer tutorials (installations and an API key): set backend_api = installations, then log in with its API key"
        case .registrations:
            BackendFailure.otherAPIPrefix + " the tutorial's AppBackend (registrations and a user's password): set backend_api = registrations, then log in with a user's password"
        }
    }

    private func request(_ method: String, _ path: String, query: [(String, String)], body: Data?, account: BackendAccount,
                         idempotencyKey: String? = nil) -> Result<HTTPRequest, BackendCallError> {
        let url: URL
        switch target(account.baseURL, path, query) {
        case .failure(let error): return .failure(error)
        case .success(let built): url = built
        }
        var headers = [account.authorizationHeader, "Accept: application/json"]
        if body != nil { headers.append("Content-Type: application/json") }
        // A key from an outbox file is a header only if it could not end or add a header line.
        if let idempotencyKey, !idempotencyKey.isEmpty, idempotencyKey.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            headers.append("Idempotency-Key: " + idempotencyKey)
        }
        // ASP.NET and some proxies answer 411 to a body-less POST without a length.
        let sent = body ?? (method == "GET" || method == "DELETE" ? nil : Data())
        return .success(HTTPRequest(method: method, url: url, headers: headers, body: sent))
    }

    private func target(_ base: URL, _ path: String, _ query: [(String, String)]) -> Result<URL, BackendCallError> {
        let allowInsecureHTTP = settings[\.allowInsecureHTTP]
        if let last = lastTarget.withLock({ $0 }), last.isFor(base, path, query, allowInsecureHTTP) { return last.url }
        let url: Result<URL, BackendCallError>
        // Checked here as well as where the URL is configured: a credentials file written
        // by an older version may still name a plain-http backend.
        if let refusal = BackendURL.insecureRefusal(base, allowInsecureHTTP: allowInsecureHTTP) {
            url = .failure(.transport(refusal))
        } else if let built = URLText.url(base: base, path: path, query: query) {
            url = .success(built)
        } else {
            url = .failure(.transport("cannot build a URL from \(BackendText.withoutUserInfo(base.absoluteString))"))
        }
        lastTarget.withLock { $0 = Target(base: base, path: path, query: query, allowInsecureHTTP: allowInsecureHTTP, url: url) }
        return url
    }

    private static func interpret(_ outcome: HTTPOutcome, account: BackendAccount, replyLimit: Int) -> Result<Data, BackendCallError> {
        let status: Int, location: String?, retryAfterText: String?, data: Data
        switch outcome {
        case .notAttempted:
            return .failure(.notAttempted)
        case .response(let code, let locationHeader, let retryAfterHeader, let reply):
            (status, location, retryAfterText, data) = (code, locationHeader, retryAfterHeader, reply)
        case .tooLarge:
            return .failure(.invalidResponse("the backend's reply is larger than \(replyLimit / 1024) KiB; the backend's replies are a few bytes, so this is not the AppBackend (check the backend URL)"))
        case .failed(let failure):
            let reason = Self.describe(failure, reaching: account.baseURL)
            switch failure.kind {
            case .noRoute: return .failure(.unreachable(reason, noRoute: true))
            case .hostNotFound, .connectTimedOut: return .failure(.unreachable(reason, noRoute: false, connecting: true))
            case .timedOut: return .failure(.unreachable(reason, noRoute: false))
            case .connectionRefused: return .failure(.cannotConnect(reason, tls: false))
            case .tlsFailed, .untrustedCertificate: return .failure(.cannotConnect(reason, tls: true))
            default: return .failure(.transport(reason))
            }
        }
        if (300...399).contains(status) {
            // Following it would send the password to wherever it points, maybe in clear.
            let place = location.map { BackendText.excerpt(BackendText.withoutUserInfo($0), account: account, maximumLength: 80) }
            let detail = "redirected to \(place ?? "an unnamed place") (not followed: it would carry the password; if the backend moved, change the backend URL)"
            return .failure(.status(status, retryAfter: nil, body: detail))
        }
        guard (200...299).contains(status) else {
            return .failure(.status(status, retryAfter: RetryAfter.parse(retryAfterText), body: BackendText.excerpt(data, account: account)))
        }
        return .success(data)
    }

    private static func describe(_ body: Data, account: BackendAccount) -> String {
        body.isEmpty ? "an empty body" : "'" + BackendText.excerpt(body, account: account) + "'"
    }

    /// OpenSSL's words for a reply that is not TLS at all: most often an https:// URL for a
    /// server that speaks plain HTTP on that port (the dev backend on this machine).
    private static func notTLSAdvice(_ failure: HTTPFailure, reaching base: URL) -> String {
        guard failure.detail.contains("wrong version number"), base.scheme?.lowercased() == "https" else { return "" }
        let host = base.host ?? ""
        guard BackendURL.isLoopback(host) else {
            return "; the server did not answer in TLS: check that the URL's port is the backend's https port"
        }
        let plain = "http" + base.absoluteString.dropFirst("https".count)
        return "; the server did not answer in TLS: if it speaks plain HTTP, as notify-devbackend does, use \(plain)"
    }

    /// Names the backend: "cannot connect to https://…: connection refused" tells a wrong
    /// URL from a backend that is down.
    private static func describe(_ failure: HTTPFailure, reaching base: URL) -> String {
        let detail: String
        switch failure.kind {
        case .timedOut: detail = "the request timed out"
        case .connectTimedOut: detail = "no connection in time"
        case .connectionRefused: detail = "connection refused"
        case .noRoute: detail = "no route to the host (the network is unreachable)"
        case .hostNotFound: detail = "host not found"
        case .connectionLost: detail = "the connection was lost"
        case .cancelled: detail = "the request was cancelled"
        case .tlsFailed: detail = "TLS failed (\(failure.detail))" + notTLSAdvice(failure, reaching: base)
        case .untrustedCertificate:
            detail = "the backend's TLS certificate is not trusted (\(failure.detail)); "
                + "if it comes from a private CA, add that CA to the system trust store "
                + "(e.g. copy it to /usr/local/share/ca-certificates/ and run `update-ca-certificates`), then restart notifyd"
        case .other: detail = failure.detail
        }
        return failure.isConnecting ? "cannot connect to \(base.absoluteString): \(detail)" : "\(base.absoluteString): \(detail)"
    }
}

/// The upsert body, with the field names the ASP.NET model binds.
struct RegistrationBody: Codable {
    var platform: String
    var handle: String
    var tags: [String]

    enum CodingKeys: String, CodingKey {
        case platform = "Platform"
        case handle = "Handle"
        case tags = "Tags"
    }
}
