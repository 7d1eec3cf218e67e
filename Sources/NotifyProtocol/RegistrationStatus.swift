#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the device's registration stands. An open set, like `ErrorCode`.
public struct RegistrationState: OpenEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// No credentials yet: `notifyctl login`.
    public static let notLoggedIn = RegistrationState("not_logged_in")
    /// Logged in but no backend URL is configured.
    public static let noBackend = RegistrationState("no_backend")
    /// No device token yet: `notifyctl set-token`.
    public static let noToken = RegistrationState("no_token")
    /// The user asked for no registration (`unregister`); `register` or a change resumes.
    public static let unregistered = RegistrationState("unregistered")
    /// A request to the backend is under way.
    public static let registering = RegistrationState("registering")
    /// The backend accepted the current token, user, platform and tags.
    public static let registered = RegistrationState("registered")
    /// The last attempt failed for a passing reason; another is scheduled.
    public static let retrying = RegistrationState("retrying")
    /// Unregistered on request, but the deletion at the backend failed for a passing
    /// reason; another attempt is scheduled (`id` is the registration still there).
    public static let unregistering = RegistrationState("unregistering")
    /// The backend refused the credentials; nothing is retried until they change.
    public static let unauthorized = RegistrationState("unauthorized")
    /// The backend refused the registration itself (a 4xx); nothing is retried until it changes.
    public static let rejected = RegistrationState("rejected")
}

/// What the backend holds for this device, as last accepted.
public struct RegisteredTarget: Codable, Hashable, Sendable {
    public var handle: String
    public var platform: Platform
    public var tags: [String]
    public var user: String
    public var backend: String
    /// The backend's API: a registration and an installation at one URL are two things.
    public var api: BackendDialect

    public init(handle: String, platform: Platform, tags: [String], user: String, backend: String, api: BackendDialect = .registrations) {
        self.handle = handle
        self.platform = platform
        self.tags = tags
        self.user = user
        self.backend = backend
        self.api = api
    }

    enum CodingKeys: String, CodingKey {
        case handle, platform, tags, user, backend, api
    }

    /// `api` is absent from the replies of a notifyd that knew one API only.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        handle = try container.decode(String.self, forKey: .handle)
        platform = try container.decode(Platform.self, forKey: .platform)
        tags = try container.decode([String].self, forKey: .tags)
        user = try container.decode(String.self, forKey: .user)
        backend = try container.decode(String.self, forKey: .backend)
        api = try container.decodeIfPresent(BackendDialect.self, forKey: .api) ?? .registrations
    }

    /// `api` only for an installation: a registration is written as before there were two.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if api != .registrations { try container.encode(api, forKey: .api) }
        try container.encode(backend, forKey: .backend)
        try container.encode(handle, forKey: .handle)
        try container.encode(platform, forKey: .platform)
        try container.encode(tags, forKey: .tags)
        try container.encode(user, forKey: .user)
    }
}

/// The registration part of `status`, of waiting commands' results and of events.
public struct RegistrationStatus: Codable, Hashable, Sendable {
    public var state: RegistrationState
    /// The backend's registration id, when one is cached; at an installations backend,
    /// the installation id this device chose.
    public var id: String?
    /// The installation id, at an installations backend (`backend_api`); absent elsewhere.
    public var installationId: String?
    /// For a person: what happened and, when something is wrong, what to do.
    public var message: String?
    /// When the backend last accepted the registration.
    public var registeredAt: Date?
    public var lastAttemptAt: Date?
    /// The next retry, or the next periodic refresh.
    public var nextAttemptAt: Date?
    /// Failed attempts since the last success.
    public var failures: Int
    public var registered: RegisteredTarget?

    public init(
        state: RegistrationState, id: String? = nil, message: String? = nil,
        registeredAt: Date? = nil, lastAttemptAt: Date? = nil, nextAttemptAt: Date? = nil,
        failures: Int = 0, registered: RegisteredTarget? = nil, installationId: String? = nil
    ) {
        self.installationId = installationId
        self.state = state
        self.id = id
        self.message = message
        self.registeredAt = registeredAt
        self.lastAttemptAt = lastAttemptAt
        self.nextAttemptAt = nextAttemptAt
        self.failures = failures
        self.registered = registered
    }

    enum CodingKeys: String, CodingKey {
        case state, id, message, failures, registered
        case installationId = "installation_id"
        case registeredAt = "registered_at"
        case lastAttemptAt = "last_attempt_at"
        case nextAttemptAt = "next_attempt_at"
    }
}
