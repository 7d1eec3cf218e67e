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
    /// The settings at start: the daemon's `SettingsStore` holds them from then on, and a
    /// reload replaces them there.
    public var settings: RuntimeSettings
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
    /// Tests: each `status` also checks that the parts it was made from are current, and
    /// logs an error if not (`StatusCheck`).
    public var checksStatusParts = false
    /// Standard error or the `log_file` in its place, opened again at each reload; nil
    /// when the log goes elsewhere (a daemon built in code).
    public var logFile: LogFile?
    /// `main` checked the state directory, which existed then, and each file in it
    /// (`StateDirectoryCheck`): `Daemon.start` need not look at them all again, which for
    /// an outbox of 100,000 files was a third of a second.
    public var stateDirectoryChecked = false

    public init(socket: SocketLocation, stateDirectory: String, settings: RuntimeSettings = RuntimeSettings()) {
        self.socket = socket
        self.stateDirectory = stateDirectory
        self.settings = settings
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
