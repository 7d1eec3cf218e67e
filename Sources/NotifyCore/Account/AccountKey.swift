#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Whose a queued message is: the user and the backend that were logged in when it was
/// accepted. It is sent with that account's credentials or not at all.
public struct AccountKey: Codable, Hashable, Sendable, CustomStringConvertible {
    public var user: String
    public var backend: String
    /// The backend's API: a message queued for one API is not sent through the other.
    public var api: BackendDialect

    public init(user: String, backend: String, api: BackendDialect = .registrations) {
        self.user = user
        self.backend = backend
        self.api = api
    }

    public var description: String { "\(user) at \(backend)" }

    enum CodingKeys: String, CodingKey {
        case user, backend, api
    }

    /// Entries written before there were two APIs have no `api`: theirs was `registrations`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        user = try container.decode(String.self, forKey: .user)
        backend = try container.decode(String.self, forKey: .backend)
        api = try container.decodeIfPresent(BackendDialect.self, forKey: .api) ?? .registrations
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if api != .registrations { try container.encode(api, forKey: .api) }
        try container.encode(backend, forKey: .backend)
        try container.encode(user, forKey: .user)
    }
}
