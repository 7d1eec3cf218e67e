#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `stop`: notifyd answers, then shuts down as on SIGTERM (watchers get a `shutdown` event).
public struct StopCommand: ParameterlessCommand {
    public static let name = "stop"
    public typealias Result = StopResult
    public init() {}
}

public struct StopResult: Codable, Hashable, Sendable {
    public var pid: Int32
    public init(pid: Int32) { self.pid = pid }
}

/// `reload`: read the configuration again, as on SIGHUP. A configuration with problems
/// changes nothing; settings that only take effect at start are named in `restartNeeded`.
public struct ReloadCommand: ParameterlessCommand {
    public static let name = "reload"
    public typealias Result = ReloadResult
    public init() {}
}

public struct ReloadResult: Codable, Hashable, Sendable {
    /// The config file that was read (or looked for).
    public var config: String
    /// Changed settings now in effect.
    public var applied: [String]
    /// Changed settings that take effect only when notifyd starts again.
    public var restartNeeded: [String]
    /// What was wrong with the configuration; when not empty, nothing was changed.
    public var problems: [String]
    /// How to restart this notifyd where its service manager should do it (`systemctl
    /// --user restart notifyd`); absent otherwise, and from older daemons.
    public var restartCommand: String?
    /// When nothing changed: whether the configuration in effect was read at notifyd's
    /// "start" or at a "reload", and when. A reload that starts notifyd by socket
    /// activation finds the file read a moment before, at the start: "nothing changed"
    /// alone reads as though the new settings were ignored. Absent from older daemons.
    public var unchangedSince: String?
    public var readAt: Date?
    /// The settings in effect that are not defaults (given by the file, the environment or
    /// a flag), by name; absent from older daemons.
    public var set: [String]?
    /// What the configuration holds that changes nothing but is worth fixing (a key given
    /// twice, with both lines); absent when none, and from older daemons.
    public var warnings: [String]?

    public init(config: String, applied: [String], restartNeeded: [String], problems: [String], restartCommand: String? = nil,
                unchangedSince: String? = nil, readAt: Date? = nil, set: [String]? = nil) {
        self.config = config
        self.applied = applied
        self.restartNeeded = restartNeeded
        self.problems = problems
        self.restartCommand = restartCommand
        self.unchangedSince = unchangedSince
        self.readAt = readAt
        self.set = set
    }

    enum CodingKeys: String, CodingKey {
        case config, applied, problems, set, warnings
        case restartNeeded = "restart_needed"
        case restartCommand = "restart_command"
        case unchangedSince = "unchanged_since"
        case readAt = "read_at"
    }
}

extension EventName {
    public static let shutdown = "shutdown"
}

/// `{"event":"shutdown"}`: notifyd is stopping normally; the connection closes next.
public struct ShutdownEvent: Codable, Hashable, Sendable {
    public var event: String = EventName.shutdown
    public var time: Date

    public init(time: Date) { self.time = time }
}
