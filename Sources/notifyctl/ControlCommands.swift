#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyClient
import NotifyProtocol
import NotifySocket

enum Stop: Subcommand {
    static let name = "stop"
    static let summary = "stop notifyd (as SIGTERM does)"
    static let options = [CommandOption(name: "--timeout", value: "SECONDS", summary: "seconds to wait for notifyd to stop")]
    static let help = """
        usage: notifyctl stop [--timeout SECONDS]

        Asks notifyd to stop, and waits until it has: in-flight work finishes or stays
        queued, state is saved, watchers get {"event":"shutdown"}. A notifyd that is not
        running is not an error. Under systemd socket activation the next command starts
        it again, unless notifyd.socket is stopped too (with systemctl).

          --timeout SECONDS  how long to wait for its answer and its stop, in all, in
                             seconds or as 2m (default 15)

        Exit status: 0 stopped (or was not running), 1 still running after the timeout.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 0...0)
        let timeout = try seconds(parsed.options["--timeout"], option: "--timeout") ?? 15
        let deadline = monotonicSeconds() + timeout
        let client: NotifyClient
        do {
            client = try context.connect(timeout: timeout)
        } catch where error.code == .unreachable {
            if context.json { context.printJSON(.object(["stopped": .bool(false)])) } else { Terminal.out("notifyd is not running.") }
            return .done
        }
        let stopped: (StopResult, JSONValue)
        do {
            stopped = try client.call(StopCommand())
            // One wait in all, not one for the answer and another for the close.
            client.timeout = max(0, deadline - monotonicSeconds())
            try client.waitForClose()
        } catch {
            throw context.failure(error)
        }
        let (result, raw) = stopped
        guard ProcessExit.wait(for: result.pid, until: deadline) else {
            throw CommandFailure(.failed, "notifyd (pid \(result.pid)) is still running \(Int(timeout.rounded())) s after it was asked to stop")
        }
        if context.json { context.printJSON(raw) } else { Terminal.out("notifyd (pid \(result.pid)) stopped.") }
        return .done
    }
}

enum Reload: Subcommand {
    static let name = "reload"
    static let summary = "read the configuration again (as SIGHUP does)"
    static let help = """
        usage: notifyctl reload

        Makes notifyd read its config file (and environment) again. Every changed
        setting takes effect at once, except state_dir, which waits until notifyd
        starts again (the answer and `notifyctl status` name it). log_file is opened
        again even when unchanged, for logrotate. A configuration with a problem
        changes nothing: the problems are listed and the exit status is 1.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        let result = try context.call(ReloadCommand(), timeout: 10)
        guard result.problems.isEmpty else {
            if !context.json {
                Terminal.error("the configuration was not reloaded; nothing changed:\n" + result.problems.map { "  " + PrintableText.line($0) }.joined(separator: "\n"))
            }
            return .failed
        }
        guard !context.json else { return .done }
        for warning in result.warnings ?? [] { Terminal.error(PrintableText.line("warning: " + warning)) }
        if result.applied.isEmpty && result.restartNeeded.isEmpty {
            Terminal.out(PrintableText.line("Reloaded \(result.config): nothing changed" + unchangedText(result) + "."))
        } else {
            if !result.applied.isEmpty { Terminal.out(PrintableText.line("Reloaded \(result.config): now in effect: \(result.applied.joined(separator: ", ")).")) }
            if !result.restartNeeded.isEmpty {
                let restart = result.restartCommand.map { "`\($0)`" } ?? "`notifyctl stop`, then start notifyd"
                Terminal.out(PrintableText.line("Changed, but only in effect after notifyd starts again: \(result.restartNeeded.joined(separator: ", ")) (\(restart))."))
            }
        }
        return .done
    }

    /// Since when, and what is in effect: the first command after a socket-activated start
    /// is often this reload, and finds the file read a moment before, when notifyd started.
    static func unchangedText(_ result: ReloadResult, now: Date = TimeText.now()) -> String {
        guard let since = result.unchangedSince, let readAt = result.readAt else { return "" }
        let age = now.timeIntervalSince(readAt) < 1 ? "a moment ago" : TimeText.relative(readAt, now: now)
        let when = since == "start" ? "notifyd read it when it started, \(age)" : "the last reload, \(age)"
        let set = result.set.map { $0.isEmpty ? "; every setting has its default" : "; in effect besides the defaults: " + $0.joined(separator: ", ") } ?? ""
        return " since \(when)" + set
    }
}
