#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whose a queued message is: the user and the backend that were logged in when it was
/// accepted. It is sent with that account's credentials or not at all.
public struct AccountKey: Codable, Hashable, Sendable, CustomStringConvertible {
    public var user: String
    public var backend: String

    public init(user: String, backend: String) {
        self.user = user
        self.backend = backend
    }

    public var description: String { "\(user) at \(backend)" }
}
