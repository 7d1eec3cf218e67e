#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// What a backend call needs to authenticate. The password never shows in string
/// interpolation, `dump` or debugger descriptions.
public struct BackendAccount: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var baseURL: URL
    public var user: String
    /// The user's password, or at an installations backend the app's API key.
    public var password: String
    public var api: BackendDialect

    public init(baseURL: URL, user: String, password: String, api: BackendDialect = .registrations) {
        self.baseURL = baseURL
        self.user = user
        self.password = password
        self.api = api
    }

    /// The header that authenticates a request, sent up front (neither backend
    /// challenges): HTTP Basic for the tutorial's AppBackend, `apikey` for the backend
    /// service. Never in the URL, where access logs would keep it.
    var authorizationHeader: String {
        switch api {
        case .registrations: "Authorization: Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        case .installations: "apikey: " + password
        }
    }

    public var description: String { "\(user) at \(baseURL.absoluteString)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "baseURL": baseURL, "api": api]) }
}

/// A backend call that did not succeed, before it is interpreted for a route.
public enum BackendCallError: Error, Equatable, Sendable {
    /// The backend answered with a non-2xx status.
    case status(Int, retryAfter: Double?, body: String)
    /// No answer: the connection was lost midway, or the request could not be made.
    case transport(String)
    /// No connection: refused, or its TLS handshake failed (`tls`). The backend is not
    /// there, though its host is.
    case cannotConnect(String, tls: Bool)
    /// No answer, and the network may be why: no route to the host (`noRoute`), or its
    /// name not resolved or no answer in time, which a machine that lost its network sees
    /// too; `connecting` when it struck before a connection was made.
    case unreachable(String, noRoute: Bool, connecting: Bool = false)
    /// A 2xx whose body is not what the route promises.
    case invalidResponse(String)
    /// Not sent: an earlier request of its lane failed (see `BackendLanes`).
    case notAttempted
    /// The backend answered `status`, and the other API's routes answer there: it is the
    /// other kind of backend (`suggestion` says which setting fixes it).
    case otherAPI(status: Int, suggestion: String)
}

extension BackendCallError {
    /// The backend answered (with a failure): it is there.
    var isAnswer: Bool {
        switch self {
        case .status, .otherAPI: true
        default: false
        }
    }
}

/// The calls of the tutorial's AppBackend. An abstraction so the registration logic can be
/// driven by tests without a network.
public protocol BackendAPI: Sendable {
    func createRegistrationId(handle: String, account: BackendAccount) async -> Result<String, BackendCallError>
    func upsertRegistration(id: String, platform: String, handle: String, tags: [String], account: BackendAccount) async -> Result<Void, BackendCallError>
    func deleteRegistration(id: String, account: BackendAccount) async -> Result<Void, BackendCallError>
    /// `idempotencyKey`, when given, goes as the `Idempotency-Key` header: the same for
    /// every attempt of one message.
    func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount, idempotencyKey: String?) async -> Result<Void, BackendCallError>
    /// A request whose only purpose is to learn whether the backend accepts `account`.
    func checkCredentials(account: BackendAccount) async -> Result<Void, BackendCallError>
    /// The network changed: connections kept alive from before may lead nowhere now.
    func networkChanged()
    /// Whether `probe` can be carried out here.
    var probes: Bool { get }
    /// Whether the backend at `backend` (a base URL) can be connected to, at no cost to it
    /// above the transport: no HTTP request. `tls`: with a TLS handshake.
    func probe(_ backend: String, tls: Bool) async -> Bool
    /// Where sends keep lanes (libcurl's thread, `BackendLanes`); nil where the caller
    /// must send one request of a lane at a time.
    var lanes: (any BackendLanes)? { get }
    /// Requests one connection carries at once: 1 over HTTP/1.1, more over HTTP/2, where
    /// `max_connections` counts connections, each with this many requests in flight.
    var requestsPerConnection: Int { get }
}

extension BackendAPI {
    public func networkChanged() {}
    public var probes: Bool { false }
    public func probe(_ backend: String, tls: Bool) async -> Bool { false }
    public var lanes: (any BackendLanes)? { nil }
    public var requestsPerConnection: Int { 1 }

    /// A send without a key (a direct `send --no-queue`, a test).
    public func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount) async -> Result<Void, BackendCallError> {
        await sendNotification(pns: pns, toTag: toTag, body: body, account: account, idempotencyKey: nil)
    }
}

/// Sends that keep their lanes' order: a request starts only once the one before it in its
/// lane was accepted, straight from the HTTP thread; after a failure the rest of the lane
/// fails with `notAttempted`, unsent.
public protocol BackendLanes: Sendable {
    /// Hands a notification over now, behind those of `lane` handed over before it;
    /// `then` is called with the outcome, on the HTTP thread.
    func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount, idempotencyKey: String?, lane: UInt64,
                          then: @escaping @Sendable (Result<Void, BackendCallError>) -> Void)
    /// Forgets a lane none of whose requests is under way or will be handed over.
    func endLane(_ lane: UInt64)
}
