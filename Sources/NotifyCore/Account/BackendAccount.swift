#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a backend call needs to authenticate. The password never shows in string
/// interpolation, `dump` or debugger descriptions.
public struct BackendAccount: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var baseURL: URL
    public var user: String
    public var password: String

    public init(baseURL: URL, user: String, password: String) {
        self.baseURL = baseURL
        self.user = user
        self.password = password
    }

    /// The `Authorization` header value: Basic, sent up front (the backend never challenges).
    var authorizationHeader: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    public var description: String { "\(user) at \(baseURL.absoluteString)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "baseURL": baseURL]) }
}

/// A backend call that did not succeed, before it is interpreted for a route.
public enum BackendCallError: Error, Equatable, Sendable {
    /// The backend answered with a non-2xx status.
    case status(Int, retryAfter: Double?, body: String)
    /// No answer: refused, reset, TLS.
    case transport(String)
    /// No answer, and the network may be why: no route to the host (`noRoute`), or its
    /// name not resolved or no answer in time, which a machine that lost its network sees too.
    case unreachable(String, noRoute: Bool)
    /// A 2xx whose body is not what the route promises.
    case invalidResponse(String)
}

/// The calls of the tutorial's AppBackend. An abstraction so the registration logic can be
/// driven by tests without a network.
public protocol BackendAPI: Sendable {
    func createRegistrationId(handle: String, account: BackendAccount) async -> Result<String, BackendCallError>
    func upsertRegistration(id: String, platform: String, handle: String, tags: [String], account: BackendAccount) async -> Result<Void, BackendCallError>
    func deleteRegistration(id: String, account: BackendAccount) async -> Result<Void, BackendCallError>
    func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount) async -> Result<Void, BackendCallError>
    /// A request whose only purpose is to learn whether the backend accepts `account`.
    func checkCredentials(account: BackendAccount) async -> Result<Void, BackendCallError>
    /// A reload replaced the settings: what was sized from them is sized again.
    func settingsChanged()
    /// The network changed: connections kept alive from before may lead nowhere now.
    func networkChanged()
}

extension BackendAPI {
    public func settingsChanged() {}
    public func networkChanged() {}
}
