#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol
import NotifySocket

/// From a command line to a daemon ready to start: the settings resolved and checked, the
/// state directory checked, the log file opened and the configuration assembled. What
/// `main` keeps is what a process does for itself: its descriptors, executors, signals,
/// core dumps and main thread.
public enum DaemonLaunch {
    public enum Outcome {
        /// `--check-config`: the report, and nothing started.
        case checked(ConfigCheck)
        /// Everything the daemon needs, and the logger it writes to.
        case ready(DaemonConfiguration, Logger)
    }

    /// Why notifyd cannot start, and the exit status that says so.
    public struct Failure: Error, Equatable {
        public let message: String
        public let status: Int32
    }

    /// `requestStop` is what `notifyctl stop` does (the process's own SIGTERM).
    public static func prepare(_ arguments: DaemonArguments, environment: [String: String],
                               requestStop: @escaping @Sendable () -> Void = {}) throws(Failure) -> Outcome {
        let checkOnly = arguments.action == .checkConfig
        let (settings, problems) = ResolvedSettings.resolve(flags: arguments.settings, configFlag: arguments.configFile, environment: environment)
        var configuration: DaemonConfiguration
        do {
            configuration = try settings.configuration(socketFlag: arguments.socket, environment: environment)
        } catch {
            throw configurationFailure([error.message], environment: environment, tellClients: !checkOnly)
        }
        if checkOnly {
            return .checked(ConfigCheck(settings: settings, problems: problems, configuration: configuration, environment: environment))
        }
        // A setting that cannot be used stops the start: running with a value the user did not
        // mean (a default instead of their backend) would be worse than not running.
        guard problems.isEmpty else {
            throw configurationFailure(problems.map(\.description), environment: environment,
                                       hint: "\n(run `notifyd --check-config` after fixing)")
        }
        // Before anything reads the state directory: the daemon reads it as it is made.
        // Whether it was there is asked first: one made after the check was not checked.
        let existed = FileManager.default.fileExists(atPath: configuration.stateDirectory)
        if let problem = StateDirectoryCheck.problem(configuration.stateDirectory) {
            throw Failure(message: problem, status: DaemonExitStatus.configuration)
        }
        configuration.stateDirectoryChecked = existed
        // Everything written to standard error goes to `log_file` when there is one, and to
        // the file of that name again after each reload.
        let logFile = LogFile(environment: environment)
        do {
            logFile.use(try logFile.prepare(settings.runtime.logFile))
        } catch {
            throw configurationFailure([error.description], environment: environment)
        }
        configuration.logFile = logFile
        configuration.requestStop = requestStop
        configuration.settingsSource = SettingsSource(current: settings) {
            ResolvedSettings.resolve(flags: arguments.settings, configFlag: arguments.configFile, environment: environment)
        }
        configuration.activatedListener = SocketActivation.systemdListener(environment: environment) ?? SocketActivation.launchdListener(name: "Listeners")
        configuration.serviceManager = ServiceManagerNotifier.fromEnvironment(environment)
        // A systemd user manager sets MANAGERPID (and INVOCATION_ID) for its services: there, a
        // restart is its to do, or it would start notifyd again on its own terms.
        if environment["INVOCATION_ID"] != nil && environment["MANAGERPID"] != nil {
            configuration.restartCommand = "systemctl --user restart notifyd"
        }
        let logger = Logger.standardError(level: configuration.settings.logLevel) { logFile.isJournal }
        for warning in settings.warnings { logger.warning(warning) }
        return .ready(configuration, logger)
    }

    /// A configuration notifyd cannot start with. Under socket activation the clients that
    /// started it hear why before it exits (see `PendingClients`).
    private static func configurationFailure(_ problems: [String], environment: [String: String], tellClients: Bool = true, hint: String = "") -> Failure {
        if tellClients, let listener = SocketActivation.systemdListener(environment: environment) {
            let text = "notifyd cannot start with its configuration:\n" + problems.map { "  " + $0 }.joined(separator: "\n")
                + "\nFix it (`notifyd --check-config` checks it); the next command starts notifyd again."
            PendingClients.refuse(listener: listener, with: WireError(code: .configError, message: text))
        }
        return Failure(message: problems.joined(separator: "\nnotifyd: ") + hint, status: DaemonExitStatus.configuration)
    }
}
