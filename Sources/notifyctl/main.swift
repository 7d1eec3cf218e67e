#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum Subcommands {
    static let all: [any Subcommand.Type] = [
        Login.self, Logout.self, SetToken.self, SetTags.self, Register.self, Unregister.self,
        Send.self, Outbox.self, Status.self, Watch.self, Ping.self,
    ]
}

func mainHelp() -> String {
    let width = Subcommands.all.map { $0.name.count }.max() ?? 0
    let list = Subcommands.all.map { "  " + $0.name + String(repeating: " ", count: width + 2 - $0.name.count) + $0.summary }
    return """
        usage: notifyctl [--socket PATH] [--json] COMMAND [ARGS...]

        Controls notifyd, the push-notification agent.

        \(list.joined(separator: "\n"))

        Options:
          --socket PATH   notifyd's socket (default $NOTIFYD_SOCKET, else $XDG_RUNTIME_DIR/notifyd/notifyd.sock)
          --json          print results as JSON on standard output
          --version       print notifyctl's version
          --help          this help; `notifyctl COMMAND --help` for a command's

        Exit status: 0 done, 1 failed, 2 usage error, 3 notifyd not reachable,
        4 accepted but not done yet (registration pending, message queued).
        """
}

func runNotifyctl(_ arguments: [String]) -> ExitCode {
    var context = Context(socketFlag: nil, json: false, environment: ProcessInfo.processInfo.environment)
    var rest = arguments[...]
    // Global options come before the command.
    while let first = rest.first, first.hasPrefix("-") {
        rest = rest.dropFirst()
        switch first {
        case "--help", "-h":
            Terminal.out(mainHelp())
            return .done
        case "--version":
            Terminal.out("notifyctl \(NotifydVersion.current) (protocol \(ProtocolVersion.current))")
            return .done
        case "--json":
            context.json = true
        case "--socket":
            guard let path = rest.first else {
                Terminal.error("--socket needs a path")
                return .usage
            }
            context.socketFlag = path
            rest = rest.dropFirst()
        default:
            if first.hasPrefix("--socket=") {
                context.socketFlag = String(first.dropFirst("--socket=".count))
            } else {
                Terminal.error("unknown option '\(first)'\n\n\(mainHelp())")
                return .usage
            }
        }
    }
    guard let name = rest.first else {
        Terminal.error("no command given\n\n\(mainHelp())")
        return .usage
    }
    if name == "help" {
        guard let topic = rest.dropFirst().first else {
            Terminal.out(mainHelp())
            return .done
        }
        guard let command = Subcommands.all.first(where: { $0.name == topic }) else {
            Terminal.error("no command '\(topic)'; run `notifyctl --help` for the list")
            return .usage
        }
        Terminal.out(command.help)
        return .done
    }
    guard let command = Subcommands.all.first(where: { $0.name == name }) else {
        Terminal.error("unknown command '\(name)'; run `notifyctl --help` for the list")
        return .usage
    }
    let commandArguments = Array(rest.dropFirst())
    if commandArguments.contains("--help") || commandArguments.contains("-h") {
        Terminal.out(command.help)
        return .done
    }
    do {
        return try command.run(commandArguments, context)
    } catch {
        Terminal.error(error.message)
        return error.code
    }
}

signal(SIGPIPE, SIG_IGN)
exit(runNotifyctl(Array(CommandLine.arguments.dropFirst())).rawValue)
