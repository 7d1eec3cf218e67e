#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `notifyd --check-config`: where each setting comes from, the socket and the state
/// directory, and every problem a start would stop at.
public struct ConfigCheck: Sendable, Equatable {
    /// For standard output.
    public var report: [String]
    /// For standard error, one line each.
    public var problems: [String]
    /// For standard error too, changing nothing: a key the file gives twice.
    public var warnings: [String]
    /// The status a start would end with for the same settings: one problem, one status.
    public var status: Int32 { problems.isEmpty ? 0 : DaemonExitStatus.configuration }

    public init(settings: ResolvedSettings, problems settingProblems: [SettingProblem], configuration: DaemonConfiguration, environment: [String: String]) {
        problems = settingProblems.map(\.description)
            + [StateDirectoryCheck.problem(configuration.stateDirectory), LogFile.problem(settings.runtime.logFile)].compactMap { $0 }
        warnings = settings.warnings
        let exists = FileManager.default.fileExists(atPath: settings.configPath)
        let absence = settings.configNamed ? " (missing)" : " (none; defaults apply)"
        let note = ConfigFile.isNullDevice(settings.configPath) ? " (empty; defaults apply)" : exists ? "" : absence
        report = ["config file: \(settings.configPath)\(note)"]
            + settings.summary(environment: environment).map { "  " + $0 }
            + ["socket: \(configuration.socket.path)",
               "state directory: \(configuration.stateDirectory)",
               problems.isEmpty ? "settings OK" : problems.count == 1 ? "1 problem" : "\(problems.count) problems"]
    }
}

/// notifyd's exit statuses beyond 0 (stopped normally), 1 (could not start) and 2 (usage).
public enum DaemonExitStatus {
    /// A configuration that cannot be used: a status of its own, so that a service manager
    /// can tell it from a crash and stop restarting (`RestartPreventExitStatus=78` in the
    /// unit; 78 is EX_CONFIG of sysexits.h).
    public static let configuration: Int32 = 78
}
