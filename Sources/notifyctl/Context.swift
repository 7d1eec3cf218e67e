#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyClient
import NotifyProtocol
import NotifySocket

/// What every subcommand gets: the global options and a way to reach the daemon.
struct Context {
    var socketFlag: String?
    var json: Bool
    var environment: [String: String]

    /// Connects, or explains where it looked and how to start notifyd.
    func connect(timeout: Double? = 30) throws(CommandFailure) -> NotifyClient {
        let location: SocketLocation
        do {
            location = try SocketLocation.resolve(flag: socketFlag, environment: environment)
        } catch {
            throw CommandFailure(.unreachable, error.message)
        }
        do {
            return try NotifyClient(socketPath: location.path, timeout: timeout)
        } catch {
            throw CommandFailure(.unreachable, """
                cannot reach notifyd at \(location.path) (from \(location.source.rawValue == "TMPDIR" ? "the /tmp fallback" : location.source.rawValue)): \(Self.detail(error))
                Start it with `systemctl --user start notifyd.socket` (after `systemctl --user reset-failed notifyd.socket notifyd.service` if systemd gave up starting it), or run `notifyd &`.
                """)
        }
    }

    /// Runs one command and prints its raw result when `--json` was given.
    func call<Command: NotifyCommand>(_ command: Command, timeout: Double? = 30, printJSON shouldPrint: Bool = true) throws(CommandFailure) -> Command.Result {
        let client = try connect(timeout: timeout)
        client.keepsRawResult = json && shouldPrint
        do {
            let (result, raw) = try client.call(command)
            if json && shouldPrint { printJSON(raw) }
            return result
        } catch {
            throw CommandFailure(error)
        }
    }

    func printJSON(_ value: JSONValue) {
        if let data = try? WireCoding.encoder().encode(value) {
            Terminal.out(PrintableText.jsonLine(String(decoding: data, as: UTF8.self)))
        }
    }

    private static func detail(_ error: ClientError) -> String {
        if case .notRunning(_, let detail) = error { return detail }
        return error.description
    }
}

/// A subcommand's failure: what to print, which exit code, and the protocol's error code
/// for `--json`.
struct CommandFailure: Error {
    var code: ExitCode
    var message: String
    var wireCode: ErrorCode

    init(_ code: ExitCode, _ message: String, wireCode: ErrorCode? = nil) {
        self.code = code
        self.message = message
        switch code {
        case .usage: self.wireCode = wireCode ?? .usage
        case .unreachable: self.wireCode = wireCode ?? .notRunning
        default: self.wireCode = wireCode ?? .internalError
        }
    }

    init(_ error: ClientError) {
        switch error {
        case .notRunning:
            self.init(.unreachable, error.description)
        case .daemon(let wire) where wire.code == .configError:
            // notifyd answered only to say it cannot run: as unreachable as one that is not.
            self.init(.unreachable, wire.message, wireCode: wire.code)
        case .closedBeforeAnswer:
            self.init(.unreachable, error.description + "\nSee why with `journalctl --user -u notifyd` or `notifyd --check-config`.")
        case .daemon(let wire) where wire.code == .unknownCommand:
            self.init(.failed, error.description + " (notifyd may be older than this notifyctl \(NotifydVersion.current); check `notifyctl ping`)", wireCode: wire.code)
        case .daemon(let wire) where wire.code == .invalidArgument:
            self.init(.usage, error.description, wireCode: wire.code)
        case .daemon(let wire):
            self.init(.failed, error.description, wireCode: wire.code)
        case .protocolViolation, .connection:
            self.init(.failed, error.description)
        }
    }

    /// `{"error":{"code":…,"message":…}}`, what `--json` prints instead of the text.
    var json: String {
        let object = JSONValue.object(["error": .object(["code": .string(wireCode.rawValue), "message": .string(message)])])
        return (try? WireCoding.encoder().encode(object)).map { PrintableText.jsonLine(String(decoding: $0, as: UTF8.self)) } ?? "{\"error\":{}}"
    }
}
