#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol
import NotifySocket

/// Everything the daemon needs to run, built once in `main` and passed down.
public struct DaemonConfiguration: Sendable {
    public var socket: SocketLocation
    public var stateDirectory: String
    public var backend: String?
    public var logLevel: LogLevel
    public var policy: RegistrationPolicy
    /// Seconds one backend request may take.
    public var requestTimeout: Double
    /// The platform of a first `set-token` without `--platform`.
    public var platform: Platform
    /// Where `send` goes when the request names no platform.
    public var sendPlatforms: [Platform]
    /// How sends are retried, how long they may wait, how they are escaped.
    public var outbox: Outbox.Settings
    public var passwordSource: PasswordSource
    /// `allow_insecure_http`: the password may travel in clear to a non-loopback http backend.
    public var allowInsecureHTTP: Bool
    /// A listening socket from systemd or launchd, used instead of binding `socket`.
    public var activatedListener: Int32?
    /// Bounds on connections, request lines and unsent replies.
    public var serverLimits = ServerLimits()
    /// Told READY=1 once serving and STOPPING=1 when shutting down.
    public var serviceManager = ServiceManagerNotifier(address: nil)
    /// How to restart this notifyd, named when a reloaded setting waits for a restart:
    /// `systemctl --user restart notifyd` under a systemd user manager, nil otherwise.
    public var restartCommand: String?
    /// What `notifyctl stop` does: `main` makes it act like SIGTERM.
    public var requestStop: @Sendable () -> Void = {}
    /// The settings in effect and how to read them again, for `reload` and SIGHUP; nil
    /// when they were not read from anywhere (a daemon built in code).
    public var settingsSource: SettingsSource?

    public init(socket: SocketLocation, stateDirectory: String, backend: String?, logLevel: LogLevel = .notice,
                policy: RegistrationPolicy = RegistrationPolicy(), requestTimeout: Double = 30,
                platform: Platform = .apns, sendPlatforms: [Platform] = [.apns], outbox: Outbox.Settings = Outbox.Settings(),
                passwordSource: PasswordSource = .stored, allowInsecureHTTP: Bool = false) {
        self.socket = socket
        self.stateDirectory = stateDirectory
        self.backend = backend
        self.logLevel = logLevel
        self.policy = policy
        self.requestTimeout = requestTimeout
        self.platform = platform
        self.sendPlatforms = sendPlatforms
        self.outbox = outbox
        self.passwordSource = passwordSource
        self.allowInsecureHTTP = allowInsecureHTTP
    }

    /// `$XDG_STATE_HOME/notifyd`, else `~/.local/state/notifyd`.
    public static func defaultStateDirectory(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return state + "/notifyd"
        }
        let home = environment["HOME"] ?? FilePath.homeDirectory()
        return home + "/.local/state/notifyd"
    }
}

/// Where the settings came from, so that a reload can read them the same way again.
public struct SettingsSource: Sendable {
    public var current: ResolvedSettings
    public var read: @Sendable () -> (ResolvedSettings, [SettingProblem])

    public init(current: ResolvedSettings, read: @escaping @Sendable () -> (ResolvedSettings, [SettingProblem])) {
        self.current = current
        self.read = read
    }
}
