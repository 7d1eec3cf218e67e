#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyCore
import NotifyDaemon
import NotifyProtocol
import NotifySocket
import NotifySystem

// First, before anything opens a descriptor or starts a thread.
InheritedDescriptors.tidy(keeping: SocketActivation.systemdDescriptors(environment: ProcessInfo.processInfo.environment))
LibraryEnvironment.set()
MallocArenas.limitToOne()
DaemonExecutors.install()

func writeToStandardError(_ text: String) {
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes.withUnsafeBytes { write(2, $0.baseAddress! + written, $0.count - written) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return }
        written += count
    }
}

/// Why notifyd cannot start. Under systemd each line carries `<3>` (error), so the
/// journal shows it as the error it is.
func fail(_ message: String, code: Int32) -> Never {
    let prefix = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil ? "<3>" : ""
    let lines = "notifyd: \(message)".split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }
    writeToStandardError(lines.joined(separator: "\n") + "\n")
    exit(code)
}

let environment = ProcessInfo.processInfo.environment
let arguments: DaemonArguments
do {
    arguments = try DaemonArguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error.message)\n\(DaemonArguments.usage)", code: 2)
}
switch arguments.action {
case .help:
    print(DaemonArguments.usage)
    exit(0)
case .version:
    print("notifyd \(NotifydVersion.current) (protocol \(ProtocolVersion.current))")
    exit(0)
case .run, .checkConfig:
    break
}
let checkOnly = arguments.action == .checkConfig

/// A configuration notifyd cannot start with. Under socket activation the clients that
/// started it hear why before it exits (see PendingClients).
@MainActor func failOnConfiguration(_ problems: [String], logHint: String = "") -> Never {
    if !checkOnly, let listener = SocketActivation.systemdListener(environment: environment) {
        let text = "notifyd cannot start with its configuration:\n" + problems.map { "  " + $0 }.joined(separator: "\n")
            + "\nFix it (`notifyd --check-config` checks it); the next command starts notifyd again."
        PendingClients.refuse(listener: listener, with: WireError(code: .configError, message: text))
    }
    fail(problems.joined(separator: "\nnotifyd: ") + logHint, code: DaemonExitStatus.configuration)
}

let (settings, problems) = ResolvedSettings.resolve(flags: arguments.settings, configFlag: arguments.configFile, environment: environment)
var configuration: DaemonConfiguration
do {
    configuration = try settings.configuration(socketFlag: arguments.socket, environment: environment)
} catch {
    failOnConfiguration([error.message])
}
if checkOnly {
    let check = ConfigCheck(settings: settings, problems: problems, configuration: configuration, environment: environment)
    for problem in check.problems { writeToStandardError("notifyd: \(problem)\n") }
    for line in check.report { print(line) }
    exit(check.status)
}
// A setting that cannot be used stops the start: running with a value the user did not
// mean (a default instead of their backend) would be worse than not running.
if !problems.isEmpty {
    failOnConfiguration(problems.map(\.description), logHint: "\n(run `notifyd --check-config` after fixing)")
}

// Before anything reads the state directory: the daemon reads it as it is made.
if let problem = StateDirectoryCheck.problem(configuration.stateDirectory) { fail(problem, code: DaemonExitStatus.configuration) }

ShutdownSignals.install()
// Everything written to standard error goes to `log_file` when there is one, and to the
// file of that name again after each reload.
let logFile = LogFile(environment: environment)
do {
    logFile.use(try logFile.prepare(settings.runtime.logFile))
} catch {
    failOnConfiguration([error.description])
}
configuration.logFile = logFile
configuration.requestStop = { ShutdownSignals.requestStop() }
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
// Before the daemon reads the credentials.
if arguments.allowCoreDumps {
    logger.warning("core dumps are allowed (--allow-core-dumps): a core file of notifyd holds the password")
} else {
    for problem in CoreDumps.forbid() { logger.warning(problem) }
}
let daemon = Daemon(configuration: configuration, logger: logger)
ReloadSignal.install {
    Task {
        logger.notice("received SIGHUP, reloading the configuration")
        _ = await daemon.reload()
    }
}
MainThread.park {
    do throws(DaemonError) {
        try await daemon.start()
    } catch {
        fail(error.description, code: error.isConfigurationError ? DaemonExitStatus.configuration : 1)
    }
    let signalNumber = await ShutdownSignals.wait()
    logger.notice(signalNumber == SIGTERM ? "shutting down on request (SIGTERM or `notifyctl stop`)" : "received signal \(signalNumber), shutting down")
    await daemon.stop()
    exit(0)
}
