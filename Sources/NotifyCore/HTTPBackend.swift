import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NotifyProtocol

/// The tutorial AppBackend over HTTP(S), with URLSession: connections are reused and
/// their number per host is bounded by the session. Redirects are not followed and replies
/// are bounded (see `HTTPTransfers`); text from the backend is scrubbed before it is kept.
public final class HTTPBackend: BackendAPI {
    /// The contract's replies are a short JSON string or nothing; anything past this is refused.
    public static let defaultReplyLimit = 64 * 1024

    private let session: URLSession
    private let transfers: HTTPTransfers
    private let allowInsecureHTTP: Bool

    public init(requestTimeout: Double = 30, maximumConnections: Int = 4, replyLimit: Int = HTTPBackend.defaultReplyLimit, allowInsecureHTTP: Bool = false) {
        // `.default`, not `.ephemeral`: on Linux `.ephemeral` makes a URLCache of its own,
        // which creates a cache directory under ~/.cache although nothing is cached.
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.timeoutIntervalForResource = requestTimeout * 2
        configuration.httpMaximumConnectionsPerHost = maximumConnections
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        transfers = HTTPTransfers(limit: replyLimit)
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: nil)
        self.allowInsecureHTTP = allowInsecureHTTP
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func createRegistrationId(handle: String, account: BackendAccount) async -> Result<String, BackendCallError> {
        let result = await call("POST", "api/register", query: [("handle", handle)], body: nil, account: account)
        return result.flatMap { body in
            // The body is a JSON string; parse it rather than trimming quotes, so escapes survive.
            guard let id = try? WireCoding.decodeChecked(String.self, from: body, decoder: JSONDecoder()), !id.isEmpty else {
                return .failure(.invalidResponse("the backend answered the registration request with \(Self.describe(body, account: account)) instead of a JSON string id"))
            }
            return .success(id)
        }
    }

    public func upsertRegistration(id: String, platform: String, handle: String, tags: [String], account: BackendAccount) async -> Result<Void, BackendCallError> {
        let registration = RegistrationBody(platform: platform, handle: handle, tags: tags)
        let body = (try? JSONEncoder().encode(registration)) ?? Data()
        return await call("PUT", "api/register/" + URLText.escape(id), query: [], body: body, account: account).map { _ in () }
    }

    public func deleteRegistration(id: String, account: BackendAccount) async -> Result<Void, BackendCallError> {
        await call("DELETE", "api/register/" + URLText.escape(id), query: [], body: nil, account: account).map { _ in () }
    }

    public func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount) async -> Result<Void, BackendCallError> {
        let encoded = (try? JSONEncoder().encode(body)) ?? Data()
        return await call("POST", "api/notifications", query: [("pns", pns), ("to_tag", toTag)], body: encoded, account: account).map { _ in () }
    }

    private func call(_ method: String, _ path: String, query: [(String, String)], body: Data?, account: BackendAccount) async -> Result<Data, BackendCallError> {
        // Checked here as well as where the URL is configured: a credentials file written
        // by an older version may still name a plain-http backend.
        if let refusal = BackendURL.insecureRefusal(account.baseURL, allowInsecureHTTP: allowInsecureHTTP) {
            return .failure(.transport(refusal))
        }
        guard let url = URLText.url(base: account.baseURL, path: path, query: query) else {
            return .failure(.transport("cannot build a URL from \(BackendText.withoutUserInfo(account.baseURL.absoluteString))"))
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue(account.authorizationHeader, forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if method != "GET" && method != "DELETE" {
            // ASP.NET and some proxies answer 411 to a body-less POST without a length.
            request.httpBody = Data()
        }
        let data: Data
        let http: HTTPURLResponse
        switch await transfers.perform(request, in: session) {
        case .response(let response, let body):
            (http, data) = (response, body)
        case .tooLarge:
            return .failure(.invalidResponse("the backend's reply is larger than \(transfers.limit / 1024) KiB; the backend's replies are a few bytes, so this is not the AppBackend (check the backend URL)"))
        case .failed(let error):
            return .failure(.transport(Self.describe(error, reaching: account.baseURL)))
        }
        if (300...399).contains(http.statusCode) {
            // Following it would send the password to wherever it points, maybe in clear.
            let location = http.value(forHTTPHeaderField: "Location").map { BackendText.excerpt(BackendText.withoutUserInfo($0), account: account, maximumLength: 80) }
            let detail = "redirected to \(location ?? "an unnamed place") (not followed: it would carry the password; if the backend moved, change the backend URL)"
            return .failure(.status(http.statusCode, retryAfter: nil, body: detail))
        }
        guard (200...299).contains(http.statusCode) else {
            let retryAfter = RetryAfter.parse(http.value(forHTTPHeaderField: "Retry-After"))
            return .failure(.status(http.statusCode, retryAfter: retryAfter, body: BackendText.excerpt(data, account: account)))
        }
        return .success(data)
    }

    private static func describe(_ body: Data, account: BackendAccount) -> String {
        body.isEmpty ? "an empty body" : "'" + BackendText.excerpt(body, account: account) + "'"
    }

    /// Names the backend: "cannot connect to https://…: connection refused" tells a wrong
    /// URL from a backend that is down.
    private static func describe(_ error: any Error, reaching base: URL) -> String {
        let connecting: Set<URLError.Code> = [.cannotConnectToHost, .cannotFindHost, .notConnectedToInternet, .dnsLookupFailed,
                                              .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                                              .serverCertificateNotYetValid]
        let detail = describe(error)
        if let code = (error as? URLError)?.code, connecting.contains(code) {
            return "cannot connect to \(base.absoluteString): \(detail)"
        }
        return "\(base.absoluteString): \(detail)"
    }

    private static func describe(_ error: any Error) -> String {
        if let urlError = error as? URLError {
            // On Linux libcurl's verification failure arrives as an unknown error whose text
            // says "SSL certificate problem: …".
            if urlError.localizedDescription.contains("SSL certificate problem") {
                return untrustedCertificate(urlError)
            }
            switch urlError.code {
            case .timedOut: return "the request timed out"
            case .cannotConnectToHost: return "connection refused"
            case .cannotFindHost: return "host not found"
            case .networkConnectionLost: return "the connection was lost"
            case .notConnectedToInternet: return "no network"
            case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
                return untrustedCertificate(urlError)
            case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateNotYetValid:
                return "TLS failed (\(urlError.localizedDescription))"
            default: return urlError.localizedDescription
            }
        }
        return "\(error)"
    }

    private static func untrustedCertificate(_ error: URLError) -> String {
        "the backend's TLS certificate is not trusted (\(error.localizedDescription)); "
            + "if it comes from a private CA, add that CA to the system trust store "
            + "(e.g. copy it to /usr/local/share/ca-certificates/ and run `update-ca-certificates`), then restart notifyd"
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
