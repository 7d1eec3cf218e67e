import Foundation
import NotifyCore
import NotifyDaemon
import NotifyProtocol
import NotifySocket

let usage = """
    usage: notifyd [--socket PATH] [--state-dir DIR] [--backend URL] [--log-level LEVEL]
                   [--refresh-interval DURATION] [--retry-min DURATION] [--retry-max DURATION]
                   [--request-timeout DURATION] [--version] [--help]

    notifyd registers this device with the app backend, keeps the registration fresh,
    and answers notifyctl on a Unix socket. It runs in the foreground; a service manager
    (systemd, launchd) or `notifyd &` puts it in the background.

      --socket PATH            control socket (default $NOTIFYD_SOCKET, else
                               $XDG_RUNTIME_DIR/notifyd/notifyd.sock)
      --state-dir DIR          state and credentials (default $XDG_STATE_HOME/notifyd,
                               else ~/.local/state/notifyd)
      --backend URL            the app backend (default $NOTIFYD_BACKEND); a login may name its own
      --log-level LEVEL        error, warning, notice (default), info or debug
      --refresh-interval D     re-register after this long even if nothing changed (default 24h)
      --retry-min D, --retry-max D
                               first and longest wait between failed attempts (default 5s, 30m)
      --request-timeout D      how long one backend request may take (default 30s)
      --version                print the version and exit
      --help                   print this help and exit

    Durations: 90, 90s, 15m, 24h, 7d.
    """

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("notifyd: \(message)\n".utf8))
    exit(code)
}

func parseDuration(_ text: String, flag: String) -> Double {
    guard let value = DurationText.parse(text) else { fail("\(flag) takes a duration like 30s, 15m or 24h, not '\(text)'", code: 2) }
    return value
}

let environment = ProcessInfo.processInfo.environment
var socketFlag: String?
var stateDirectory: String?
var backend = environment["NOTIFYD_BACKEND"].flatMap { $0.isEmpty ? nil : $0 }
var logLevel = LogLevel(name: environment["NOTIFYD_LOG_LEVEL"] ?? "") ?? .notice
var policy = RegistrationPolicy()
var requestTimeout = 30.0

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
    case "--socket": socketFlag = value()
    case "--state-dir": stateDirectory = value()
    case "--backend": backend = value()
    case "--log-level":
        let text = value()
        guard let level = LogLevel(name: text) else { fail("--log-level takes error, warning, notice, info or debug, not '\(text)'", code: 2) }
        logLevel = level
    case "--refresh-interval":
        policy.refreshInterval = parseDuration(value(), flag: name)
        if policy.refreshInterval < 1 { fail("--refresh-interval must be at least 1s", code: 2) }
    case "--retry-min": policy.backoff.initial = parseDuration(value(), flag: name)
    case "--retry-max": policy.backoff.maximum = parseDuration(value(), flag: name)
    case "--request-timeout":
        requestTimeout = parseDuration(value(), flag: name)
        if requestTimeout <= 0 { fail("--request-timeout must be more than 0", code: 2) }
    default:
        fail("unknown option '\(argument)'\n\(usage)", code: 2)
    }
}

let socket: SocketLocation
do {
    socket = try SocketLocation.resolve(flag: socketFlag, environment: environment)
} catch {
    fail(error.message, code: 1)
}

let configuration = DaemonConfiguration(
    socket: socket,
    stateDirectory: stateDirectory ?? DaemonConfiguration.defaultStateDirectory(environment: environment),
    backend: backend, logLevel: logLevel, policy: policy, requestTimeout: requestTimeout)
let logger = Logger.standardError(level: logLevel, environment: environment)

ShutdownSignals.install()
let daemon = Daemon(configuration: configuration, logger: logger)
do {
    try await daemon.start()
} catch {
    fail(error.description, code: 1)
}
let signalNumber = await ShutdownSignals.wait()
logger.notice("received signal \(signalNumber), shutting down")
await daemon.stop()
exit(0)
