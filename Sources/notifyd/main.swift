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

let usage = """
    usage: notifyd [--socket PATH] [--state-dir DIR] [--backend URL] [--config FILE] [--check-config]
                   [--log-level LEVEL] [--log-file FILE] [--refresh-interval D] [--retry-min D] [--retry-max D]
                   [--request-timeout D] [--allow-insecure-http] [--allow-core-dumps]
                   [--version] [--help]

    notifyd registers this device with the app backend, keeps the registration fresh,
    sends notifications, and answers notifyctl on a Unix socket. It runs in the foreground;
    a service manager (systemd, launchd) or `notifyd &` puts it in the background.
    SIGTERM (or `notifyctl stop`) stops it; SIGHUP (or `notifyctl reload`) reloads the config.
    Exit status: 0 stopped normally, 1 could not start, 2 usage error, 78 configuration error
    (also from --check-config when it finds a problem).

      --socket PATH            control socket (default $NOTIFYD_SOCKET, else
                               $XDG_RUNTIME_DIR/notifyd/notifyd.sock)
      --state-dir DIR          state, credentials and outbox (default $XDG_STATE_HOME/notifyd,
                               else ~/.local/state/notifyd)
      --backend URL            the app backend; a login may name its own
      --config FILE            the config file (default $NOTIFYD_CONFIG, else
                               $XDG_CONFIG_HOME/notifyd/config, else ~/.config/notifyd/config)
      --check-config           check the settings, print where each comes from, and exit
      --log-level LEVEL        error, warning, notice (default), info or debug
      --log-file FILE          append the log to FILE instead of standard error
      --refresh-interval D     re-register after this long even if nothing changed (default 24h)
      --retry-min D, --retry-max D
                               first and longest wait between failed attempts (default 5s, 30m)
      --request-timeout D      how long one backend request may take (default 30s)
      --allow-insecure-http    allow a plain http:// backend on another machine; every
                               request then carries the password in clear (insecure)
      --allow-core-dumps       let the system write a core file on a crash, and debuggers
                               attach (off by default: a core file would hold the password)
      --version                print the version and exit
      --help                   print this help and exit

    Every setting can also be given in the config file as `key = value` or in the
    environment as NOTIFYD_<KEY>; flags win over the environment, which wins over the file.
    Keys: \(ResolvedSettings.keyNames.joined(separator: ", ")).
    Durations: 90, 90s, 15m, 24h, 7d.
    """

/// A configuration that cannot be used: its own exit status, so that a service manager
/// can tell it from a crash and stop restarting (`RestartPreventExitStatus=78` in the
/// unit; 78 is EX_CONFIG of sysexits.h).
let configurationErrorStatus: Int32 = 78

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
var flagValues: [SettingValue] = []
var configFlag: String?
var socketFlag: String?
var checkOnly = false
var allowCoreDumps = false

var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    var name = argument
    var inlineValue: String?
    if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
    }
    func value() -> String {
        if let inlineValue { return inlineValue }
        guard let next = arguments.popFirst() else { fail("\(name) needs a value\n\(usage)", code: 2) }
        return next
    }
    switch name {
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--version":
        print("notifyd \(NotifydVersion.current) (protocol \(ProtocolVersion.current))")
        exit(0)
    case "--check-config":
        checkOnly = true
    case "--allow-core-dumps":
        allowCoreDumps = true
    case "--config":
        configFlag = value()
    case "--socket":
        socketFlag = value()
    case "--allow-insecure-http":
        // A switch: `--allow-insecure-http` alone means true.
        flagValues.append(SettingValue(key: "allow_insecure_http", value: inlineValue ?? "true", origin: name))
    default:
        guard let key = ResolvedSettings.flagNames[name] else { fail("unknown option '\(argument)'\n\(usage)", code: 2) }
        flagValues.append(SettingValue(key: key, value: value(), origin: name))
    }
}


/// A configuration notifyd cannot start with. Under socket activation the clients that
/// started it hear why before it exits (see PendingClients).
@MainActor func failOnConfiguration(_ problems: [String], logHint: String = "") -> Never {
    if !checkOnly, let listener = SocketActivation.systemdListener(environment: environment) {
        let text = "notifyd cannot start with its configuration:\n" + problems.map { "  " + $0 }.joined(separator: "\n")
            + "\nFix it (`notifyd --check-config` checks it); the next command starts notifyd again."
        PendingClients.refuse(listener: listener, with: WireError(code: .configError, message: text))
    }
    fail(problems.joined(separator: "\nnotifyd: ") + logHint, code: configurationErrorStatus)
}

let (settings, problems) = ResolvedSettings.resolve(flags: flagValues, configFlag: configFlag, environment: environment)
var configuration: DaemonConfiguration
do {
    configuration = try settings.configuration(socketFlag: socketFlag, environment: environment)
} catch {
    failOnConfiguration([error.message])
}
/// Whether notifyd may use the state directory as it is (see `StateDirectoryCheck`).
func stateDirectoryProblem(_ directory: String) -> String? {
    do throws(DaemonError) {
        try StateDirectoryCheck.run(directory)
        return nil
    } catch {
        return error.description
    }
}

if checkOnly {
    let found = problems.map(\.description) + [stateDirectoryProblem(configuration.stateDirectory)].compactMap { $0 }
    for problem in found { writeToStandardError("notifyd: \(problem)\n") }
    print("config file: \(settings.configPath)\(FileManager.default.fileExists(atPath: settings.configPath) ? "" : " (none; defaults apply)")")
    for line in settings.summary(environment: environment) { print("  \(line)") }
    print("socket: \(configuration.socket.path)")
    print("state directory: \(configuration.stateDirectory)")
    print(found.isEmpty ? "settings OK" : found.count == 1 ? "1 problem" : "\(found.count) problems")
    // The status a start would end with for the same settings: one problem, one status.
    exit(found.isEmpty ? 0 : configurationErrorStatus)
}
// A setting that cannot be used stops the start: running with a value the user did not
// mean (a default instead of their backend) would be worse than not running.
if !problems.isEmpty {
    failOnConfiguration(problems.map(\.description), logHint: "\n(run `notifyd --check-config` after fixing)")
}

// Before anything reads the state directory: the daemon reads it as it is made.
if let problem = stateDirectoryProblem(configuration.stateDirectory) { fail(problem, code: configurationErrorStatus) }

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
let givenFlags = flagValues
let givenConfig = configFlag
configuration.settingsSource = SettingsSource(current: settings) {
    ResolvedSettings.resolve(flags: givenFlags, configFlag: givenConfig, environment: environment)
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
if allowCoreDumps {
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
        fail(error.description, code: error.isConfigurationError ? configurationErrorStatus : 1)
    }
    let signalNumber = await ShutdownSignals.wait()
    logger.notice(signalNumber == SIGTERM ? "shutting down on request (SIGTERM or `notifyctl stop`)" : "received signal \(signalNumber), shutting down")
    await daemon.stop()
    exit(0)
}
