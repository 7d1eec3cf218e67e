#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyClient
import NotifyProtocol

enum Ping: Subcommand {
    static let name = "ping"
    static let summary = "check that notifyd answers; print its version"
    static let help = """
        usage: notifyctl ping

        Prints notifyd's version, protocol version and process id.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        let result = try context.call(PingCommand(), timeout: 5)
        if !context.json {
            Terminal.out("notifyd \(result.version) (protocol \(result.protocol)), pid \(result.pid)")
            if result.protocol != ProtocolVersion.current {
                Terminal.error("warning: notifyd speaks protocol \(result.protocol), this notifyctl \(ProtocolVersion.current)")
            }
        }
        return .done
    }
}

enum Status: Subcommand {
    static let name = "status"
    static let summary = "show the registration, account, device and daemon"
    static let help = """
        usage: notifyctl status

        Shows whether the device is registered (and its id), the user, the backend, the
        token, platform and tags, and what happens next. Never shows the password.
        Exit status: 0 registered, 1 refused (log in again, or fix the registration),
        4 not registered yet.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        let status = try context.call(StatusCommand(), timeout: 5)
        let registration = status.registration
        if !context.json {
            var lines = ["registration: \(registration.state)" + (registration.id.map { " (id \($0))" } ?? "")]
            if let message = registration.message { lines.append("              \(message)") }
            if let registeredAt = registration.registeredAt { lines.append("registered:   \(TimeText.stamped(registeredAt))") }
            if let next = registration.nextAttemptAt {
                lines.append("\(registration.state == .retrying ? "next attempt: " : "refresh due:  ")\(TimeText.stamped(next))")
            }
            if registration.failures > 0 { lines.append("failures:     \(registration.failures) since the last success") }
            lines.append("user:         \(status.account?.user ?? "(not logged in)")")
            if let problem = status.account?.passwordProblem { lines.append("password:     \(problem); retrying") }
            lines.append("backend:      \(status.backend ?? "(none configured)")")
            lines.append("token:        \(status.device.token ?? "(none)")")
            lines.append("platform:     \(status.device.platform)")
            lines.append("tags:         \(status.device.tags.isEmpty ? "(none)" : status.device.tags.joined(separator: " "))")
            lines.append("notifyd:      \(status.daemon.version), pid \(status.daemon.pid), \(status.daemon.socket)")
            Terminal.out(lines.joined(separator: "\n"))
        }
        switch registration.state {
        case .registered: return .done
        case .unauthorized, .rejected: return .failed
        default: return .later
        }
    }
}

enum Watch: Subcommand {
    static let name = "watch"
    static let summary = "stream registration events as JSON lines"
    static let help = """
        usage: notifyctl watch

        Prints the current registration, then one JSON object per line for every event
        ({"event":"registration",...}) until interrupted.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        let client = try context.connect(timeout: nil)
        do {
            let (_, raw) = try client.call(WatchCommand())
            context.printJSON(raw)
            while true {
                Terminal.out(String(decoding: try client.nextEvent(), as: UTF8.self))
            }
        } catch {
            throw CommandFailure(error)
        }
    }
}
