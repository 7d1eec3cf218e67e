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
import NotifyClient
import NotifyProtocol
import NotifySocket

/// What every subcommand gets: the global options and a way to reach the daemon.
struct Context {
    var socketFlag: String?
    var json: Bool

    /// Connects, or explains where it looked and how to start notifyd.
    func connect(timeout: Double? = 30) throws(CommandFailure) -> NotifyClient {
        let location = try socketLocation()
        do {
            return try NotifyClient(socketPath: location.path, timeout: timeout)
        } catch {
            let source = location.source == .temporaryDirectory ? "the /tmp fallback" : location.source.rawValue
            throw CommandFailure(.unreachable, "cannot reach notifyd at \(location.path) (from \(source)): \(Self.detail(error))\n"
                + howToStart(location))
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
            throw failure(error)
        }
    }

    /// A failure once connected; one that closed before answering is a notifyd that could
    /// not start: systemd says why where it holds the socket, the log and the config check
    /// elsewhere.
    func failure(_ error: ClientError) -> CommandFailure {
        guard case .closedBeforeAnswer = error else { return CommandFailure(error) }
        let location = try? socketLocation()
        var units = location.flatMap(systemdUnits)
        // A connection systemd closed because it gave up: the socket unit is marked failed
        // a moment after the service's start was refused. Asked again, it says so.
        for _ in 0..<5 where units?.socket?.activeState == "active" && units?.service?.activeState == "failed" {
            usleep(100_000)
            units = location.flatMap(systemdUnits)
        }
        if let advice = units?.advice {
            // systemd's verdict first: it is what the user acts on.
            return CommandFailure(.unreachable, advice + "\n(" + error.description + ")")
        }
        return CommandFailure(.unreachable, error.description
            + "\nSee why with `journalctl --user -u notifyd` (under systemd) or `notifyd --check-config`.")
    }

    private func socketLocation() throws(CommandFailure) -> SocketLocation {
        do {
            return try SocketLocation.resolve(flag: socketFlag, variable: ProcessEnvironment.value)
        } catch {
            throw CommandFailure(.unreachable, error.message)
        }
    }

    /// Only what fits the path tried: notifyd.socket listens at the runtime directory's
    /// path alone, and then systemd says what state it is in.
    private func howToStart(_ location: SocketLocation) -> String {
        switch location.source {
        case .runtimeDirectory:
            guard let units = systemdUnits(at: location) else { return "Start it with `notifyd &`." }
            return units.advice ?? "notifyd.socket is not installed for systemd here: run `contrib/install.sh`, or start it with `notifyd &`."
        case .flag, .environment:
            return "Start a notifyd there with `notifyd --socket \(location.path) &`."
        case .temporaryDirectory:
            return "Start it with `notifyd &` (with no XDG_RUNTIME_DIR, it listens there too)."
        }
    }

    /// What the user's systemd says of notifyd's units, asked only for the path
    /// notifyd.socket listens on: nil elsewhere, and without systemd.
    private func systemdUnits(at location: SocketLocation) -> SystemdUnits? {
        location.source == .runtimeDirectory ? SystemdQuery.units() : nil
    }

    func printJSON(_ value: JSONValue) {
        Terminal.out(PrintableText.jsonLine(String(decoding: JSONTextWriter.line(value), as: UTF8.self)))
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
    /// notifyd's own words, for `--json`: `message` has them made safe for a terminal
    /// (escapes disarmed), which JSON, escaping them itself, must not do a second time.
    var daemonMessage: String?

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
            self.init(.unreachable, error.description)
        case .daemon(let wire) where wire.code == .unknownCommand:
            let older = " (notifyd may be older than this notifyctl \(NotifydVersion.current); check `notifyctl ping`)"
            self.init(.failed, error.description + older, wireCode: wire.code)
            daemonMessage = wire.message + older
            return
        case .daemon(let wire) where wire.code == .invalidArgument:
            self.init(.usage, error.description, wireCode: wire.code)
        case .daemon(let wire) where wire.code == .loginPending:
            // Not refused: it may still take effect, by itself.
            self.init(.later, error.description, wireCode: wire.code)
        case .daemon(let wire):
            self.init(.failed, error.description, wireCode: wire.code)
        case .protocolViolation, .connection:
            self.init(.failed, error.description)
        }
        if case .daemon(let wire) = error { daemonMessage = wire.message }
    }

    /// `{"error":{"code":…,"message":…}}`, what `--json` prints instead of the text.
    var json: String {
        let object = JSONValue.object(["error": .object(["code": .string(wireCode.rawValue), "message": .string(daemonMessage ?? message)])])
        return PrintableText.jsonLine(String(decoding: JSONTextWriter.line(object), as: UTF8.self))
    }
}
