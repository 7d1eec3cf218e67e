#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ping` (alias `hello`): is a daemon there, and which version.
public struct PingCommand: ParameterlessCommand {
    public static let name = "ping"
    public typealias Result = PingResult
    public init() {}

    /// As the decoder reads it; nil for anything else, which it is left to.
    public static func result(json: JSONValue) -> PingResult? {
        guard case .string(let version)? = json["version"],
              case .number(let number)? = json["protocol"], let `protocol` = Int(exactly: number),
              case .number(let process)? = json["pid"], let pid = Int32(exactly: process) else { return nil }
        var build: String?
        if case .string(let text)? = json["build"] { build = text }
        return PingResult(version: version, protocol: `protocol`, pid: pid, build: build)
    }
}

public struct PingResult: Codable, Hashable, Sendable {
    public var version: String
    public var `protocol`: Int
    public var pid: Int32
    /// Which build of `version` runs (`NotifydVersion.build`): two packages of one version
    /// are told apart by it. Absent when the build was not told, and from older daemons.
    public var build: String?

    public init(version: String, protocol: Int, pid: Int32, build: String? = nil) {
        self.version = version
        self.protocol = `protocol`
        self.pid = pid
        self.build = build
    }
}

public struct StatusCommand: ParameterlessCommand {
    public static let name = "status"
    public typealias Result = StatusResult
    public init() {}
}

public struct StatusResult: Codable, Hashable, Sendable {
    public struct Daemon: Codable, Hashable, Sendable {
        public var version: String
        public var `protocol`: Int
        public var pid: Int32
        public var socket: String
        public var stateDirectory: String
        public var startedAt: Date
        /// Where a login's password comes from: "file" (given at login), "command" or
        /// "systemd-credential". Clients skip the password prompt unless it is "file".
        public var passwordSource: String?
        /// Settings changed since notifyd started that take effect only when it starts
        /// again (only `state_dir` can be one); absent when none, and from older daemons.
        public var restartNeeded: [String]?

        public init(version: String, protocol: Int, pid: Int32, socket: String, stateDirectory: String, startedAt: Date, passwordSource: String? = nil,
                    restartNeeded: [String]? = nil) {
            self.version = version
            self.protocol = `protocol`
            self.pid = pid
            self.socket = socket
            self.stateDirectory = stateDirectory
            self.startedAt = startedAt
            self.passwordSource = passwordSource
            self.restartNeeded = restartNeeded
        }

        enum CodingKeys: String, CodingKey {
            case version, `protocol`, pid, socket
            case stateDirectory = "state_directory"
            case startedAt = "started_at"
            case passwordSource = "password_source"
            case restartNeeded = "restart_needed"
        }
    }

    /// Who we are at the backend. Never carries the password.
    public struct Account: Codable, Hashable, Sendable {
        public var user: String
        /// Where the password comes from: "file", "keyring", "command" or "systemd-credential".
        public var passwordSource: String
        /// Why the password command or systemd credential failed last (retried with
        /// backoff); absent while it works.
        public var passwordProblem: String?

        public init(user: String, passwordSource: String, passwordProblem: String? = nil) {
            self.user = user
            self.passwordSource = passwordSource
            self.passwordProblem = passwordProblem
        }

        enum CodingKeys: String, CodingKey {
            case user
            case passwordSource = "password_source"
            case passwordProblem = "password_problem"
        }
    }

    public struct Device: Codable, Hashable, Sendable {
        public var token: String?
        public var platform: Platform
        public var tags: [String]

        public init(token: String?, platform: Platform, tags: [String]) {
            self.token = token
            self.platform = platform
            self.tags = tags
        }
    }

    /// A login kept for another backend origin than the one in force, where its password
    /// may not go: nobody is logged in here until `notifyctl login`.
    public struct LoginElsewhere: Codable, Hashable, Sendable {
        public var user: String
        /// scheme://host:port of the backend the login was made for.
        public var origin: String

        public init(user: String, origin: String) {
            self.user = user
            self.origin = origin
        }
    }

    public var daemon: Daemon
    public var backend: String?
    /// The API of `backend` (`backend_api`); absent from daemons that knew one API only.
    public var backendAPI: BackendDialect?
    public var account: Account?
    /// Absent unless the saved login is for another backend than `backend`.
    public var loginElsewhere: LoginElsewhere?
    public var device: Device
    public var registration: RegistrationStatus
    /// Absent from daemons older than the outbox summary.
    public var outbox: OutboxSummary?
    /// Absent from daemons older than the network monitor.
    public var network: NetworkStatus?
    /// Registrations of this device at backends it no longer uses, still to be deleted
    /// there; absent when there are none.
    public var retiredRegistrations: [RetiredRegistration]?

    public init(daemon: Daemon, backend: String?, account: Account?, device: Device, registration: RegistrationStatus, outbox: OutboxSummary? = nil,
                network: NetworkStatus? = nil, retiredRegistrations: [RetiredRegistration]? = nil, loginElsewhere: LoginElsewhere? = nil,
                backendAPI: BackendDialect? = nil) {
        self.daemon = daemon
        self.backend = backend
        self.backendAPI = backendAPI
        self.account = account
        self.loginElsewhere = loginElsewhere
        self.device = device
        self.registration = registration
        self.outbox = outbox
        self.network = network
        self.retiredRegistrations = retiredRegistrations
    }

    enum CodingKeys: String, CodingKey {
        case daemon, backend, account, device, registration, outbox, network
        case backendAPI = "backend_api"
        case retiredRegistrations = "retired_registrations"
        case loginElsewhere = "login_elsewhere"
    }
}

/// A registration left at a backend this device no longer uses (the backend changed):
/// notifyd deletes it there with the login that made it, retrying until it is gone or
/// it gives up.
public struct RetiredRegistration: Codable, Hashable, Sendable {
    public var backend: String
    /// The API of that backend; absent for `registrations`, and from older daemons.
    public var api: BackendDialect?
    public var id: String
    public var user: String
    /// When the backend changed.
    public var since: Date
    public var failures: Int
    public var nextAttemptAt: Date?
    /// Why the last attempt failed.
    public var error: String?
    /// Since when that backend could not be reached at all, while notifyd probes for its
    /// return: the old backend's, never shown as the backend in use's (`network`).
    public var unreachableSince: Date?

    public init(backend: String, id: String, user: String, since: Date, failures: Int = 0, nextAttemptAt: Date? = nil, error: String? = nil,
                unreachableSince: Date? = nil, api: BackendDialect? = nil) {
        self.backend = backend
        self.api = api
        self.id = id
        self.user = user
        self.since = since
        self.failures = failures
        self.nextAttemptAt = nextAttemptAt
        self.error = error
        self.unreachableSince = unreachableSince
    }

    enum CodingKeys: String, CodingKey {
        case backend, api, id, user, since, failures
        case nextAttemptAt = "next_attempt_at"
        case error
        case unreachableSince = "unreachable_since"
    }
}

/// Turn this connection into an event stream (it still accepts commands).
public struct WatchCommand: ParameterlessCommand {
    public static let name = "watch"
    public typealias Result = WatchResult
    public init() {}
}

public struct WatchResult: Codable, Hashable, Sendable {
    public var registration: RegistrationStatus
    public init(registration: RegistrationStatus) { self.registration = registration }
}
