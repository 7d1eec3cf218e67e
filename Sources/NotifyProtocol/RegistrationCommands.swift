#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How long a command that changes the registration waits for the backend's answer.
/// Without `wait`, it waits; `timeout` bounds the wait (seconds, default 10).
public protocol WaitingCommand: NotifyCommand where Result == RegistrationOutcome {
    var wait: Bool? { get }
    var timeout: Double? { get set }
}

extension WaitingCommand {
    public static var defaultTimeout: Double { 10 }
    public var waitSeconds: Double? {
        wait == false ? nil : max(0, min(timeout ?? Self.defaultTimeout, 300))
    }
}

/// The result of a command that changed what should be registered.
public struct RegistrationOutcome: Codable, Hashable, Sendable {
    public var registration: RegistrationStatus
    /// False when the wait ran out (or was not asked for) before the backend answered.
    public var settled: Bool
    /// `login` only: where the password was kept.
    public var passwordKept: PasswordKept?
    /// `set-token` only: the platform the token was registered for, and why that one.
    public var tokenPlatform: TokenPlatform?

    public init(registration: RegistrationStatus, settled: Bool, passwordKept: PasswordKept? = nil, tokenPlatform: TokenPlatform? = nil) {
        self.registration = registration
        self.settled = settled
        self.passwordKept = passwordKept
        self.tokenPlatform = tokenPlatform
    }

    enum CodingKeys: String, CodingKey {
        case registration, settled
        case passwordKept = "password_kept"
        case tokenPlatform = "token_platform"
    }
}

/// The platform `set-token` used, said every time: `chosen` is "given" (--platform),
/// "kept" (the previous token's), "token_form" (a `<…>` token is APNs's) or "default"
/// (the `platform` setting, for a first token).
public struct TokenPlatform: Codable, Hashable, Sendable {
    public var platform: Platform
    public var chosen: String

    public init(platform: Platform, chosen: String) {
        self.platform = platform
        self.chosen = chosen
    }
}

/// Where a login's password went: `in` is "keyring", "file", "command" or
/// "systemd-credential" (notifyd gets it itself and keeps it nowhere); `detail` says it to a
/// person; `warning`, what of the replaced login the keyring kept.
public struct PasswordKept: Codable, Hashable, Sendable {
    public var `in`: String
    public var detail: String?
    public var warning: String?

    public init(in place: String, detail: String? = nil, warning: String? = nil) {
        self.in = place
        self.detail = detail
        self.warning = warning
    }
}

public struct LoginCommand: WaitingCommand {
    public static let name = "login"
    public var user: String
    /// Absent when notifyd gets the password from a command or a systemd credential.
    public var password: String?
    /// The backend to use with this account; the daemon's configured one when absent.
    public var backend: String?
    public var wait: Bool?
    public var timeout: Double?

    public init(user: String, password: String?, backend: String? = nil, wait: Bool? = nil, timeout: Double? = nil) {
        self.user = user
        self.password = password
        self.backend = backend
        self.wait = wait
        self.timeout = timeout
    }
}

public struct SetTokenCommand: WaitingCommand {
    public static let name = "set-token"
    public var token: String
    public var platform: Platform?
    public var wait: Bool?
    public var timeout: Double?

    public init(token: String, platform: Platform? = nil, wait: Bool? = nil, timeout: Double? = nil) {
        self.token = token
        self.platform = platform
        self.wait = wait
        self.timeout = timeout
    }
}

public struct SetTagsCommand: WaitingCommand {
    public static let name = "set-tags"
    public var tags: [String]
    public var wait: Bool?
    public var timeout: Double?

    public init(tags: [String], wait: Bool? = nil, timeout: Double? = nil) {
        self.tags = tags
        self.wait = wait
        self.timeout = timeout
    }
}

/// Register now, even if the registration is fresh or was refused before.
public struct RegisterCommand: WaitingCommand {
    public static let name = "register"
    public var wait: Bool?
    public var timeout: Double?

    public init(wait: Bool? = nil, timeout: Double? = nil) {
        self.wait = wait
        self.timeout = timeout
    }
}

/// Delete the registration at the backend and stop registering; credentials stay.
public struct UnregisterCommand: ParameterlessCommand {
    public static let name = "unregister"
    public typealias Result = UnregisterResult
    public init() {}
}

public struct UnregisterResult: Codable, Hashable, Sendable {
    /// The id that was deleted (or found already gone); nil when none was cached.
    public var deletedId: String?
    public var registration: RegistrationStatus
    /// The id whose deletion failed for a reason that may pass, and which notifyd keeps
    /// trying to delete (`registration` says why and when next). Absent from older daemons.
    public var deletionPending: String?

    public init(deletedId: String?, registration: RegistrationStatus, deletionPending: String? = nil) {
        self.deletedId = deletedId
        self.registration = registration
        self.deletionPending = deletionPending
    }

    enum CodingKeys: String, CodingKey {
        case registration
        case deletedId = "deleted_id"
        case deletionPending = "deletion_pending"
    }
}

/// Unregister, then forget the credentials. With `force`, forget them even when the
/// backend could not be reached to delete the registration. With `forgetOldBackends`, also
/// give up deleting the registrations left at old backends, and the passwords kept for
/// that (also when nobody is logged in).
public struct LogoutCommand: NotifyCommand {
    public static let name = "logout"
    public typealias Result = LogoutResult
    public var force: Bool?
    public var forgetOldBackends: Bool?
    public init(force: Bool? = nil, forgetOldBackends: Bool? = nil) {
        self.force = force
        self.forgetOldBackends = forgetOldBackends
    }

    enum CodingKeys: String, CodingKey {
        case force
        case forgetOldBackends = "forget_old_backends"
    }
}

public struct LogoutResult: Codable, Hashable, Sendable {
    /// Nil when nobody was logged in (a `forget_old_backends` alone).
    public var user: String?
    public var deletedId: String?
    /// Set when `force` forgot the credentials although the registration could not be deleted.
    public var warning: String?
    /// What is still kept after the logout, and why: the password of each registration left
    /// at an old backend, until it is deleted there.
    public var passwordsKept: [String]?
    /// What `forget_old_backends` gave up: a line naming each registration left behind.
    public var oldBackendsForgotten: [String]?

    public init(user: String?, deletedId: String?, warning: String? = nil, passwordsKept: [String]? = nil, oldBackendsForgotten: [String]? = nil) {
        self.user = user
        self.deletedId = deletedId
        self.warning = warning
        self.passwordsKept = passwordsKept
        self.oldBackendsForgotten = oldBackendsForgotten
    }

    enum CodingKeys: String, CodingKey {
        case user, warning
        case deletedId = "deleted_id"
        case passwordsKept = "passwords_kept"
        case oldBackendsForgotten = "old_backends_forgotten"
    }
}
