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
import Synchronization

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

/// Writes what was logged before notifyd exits (see `LogWriter`), once there is a logger.
let flushLog = Mutex<(@Sendable () -> Void)?>(nil)

func exitWithLog(_ code: Int32) -> Never {
    flushLog.withLock { $0 }?()
    exit(code)
}

/// Why notifyd cannot start. Under systemd each line carries `<3>` (error), so the
/// journal shows it as the error it is.
func fail(_ message: String, code: Int32) -> Never {
    flushLog.withLock { $0 }?()
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
    // One line and where the rest is, as notifyctl does: the whole usage would bury the error.
    fail("\(error.message)\nRun `notifyd --help` for usage.", code: 2)
}
switch arguments.action {
case .help:
    print(DaemonArguments.usage)
    exit(0)
case .version:
    print("notifyd \(NotifydVersion.described())")
    exit(0)
case .run, .checkConfig:
    break
}
ShutdownSignals.install()
let configuration: DaemonConfiguration
let logger: Logger
do {
    switch try DaemonLaunch.prepare(arguments, environment: environment, requestStop: { ShutdownSignals.requestStop() }) {
    case .checked(let check):
        for problem in check.problems { writeToStandardError("notifyd: \(problem)\n") }
        for warning in check.warnings { writeToStandardError("notifyd: warning: \(warning)\n") }
        for line in check.report { print(line) }
        exit(check.status)
    case .ready(let ready, let readyLogger):
        (configuration, logger) = (ready, readyLogger)
        flushLog.withLock { $0 = { readyLogger.flush(within: 2) } }
    }
} catch {
    fail(error.message, code: error.status)
}
// Before the daemon reads the credentials.
if arguments.allowCoreDumps {
    logger.warning("core dumps are allowed (--allow-core-dumps): a core file of notifyd holds the password")
} else {
    for problem in CoreDumps.forbid() { logger.warning(problem) }
}
let daemon = Daemon(configuration: configuration, logger: logger)
ReloadSignal.install {
    // The signal handler's thread must not wait: the reload runs on the pool.
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
    exitWithLog(0)
}
