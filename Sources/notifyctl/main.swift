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
        Send.self, Outbox.self, Status.self, Watch.self, Ping.self, Reload.self, Stop.self, Completion.self,
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
          --json          print results, and errors, as JSON on standard output
          --version       print notifyctl's version
          --help          this help; `notifyctl COMMAND --help` for a command's usage
        --socket and --json may also come after the command.

        Exit status: 0 done, 1 failed, 2 usage error, 3 notifyd not reachable,
        4 accepted, and notifyd is still at it by itself (a registration retried, a message queued).
        """
}

/// Runs one command line; what it prints goes to stdout and stderr, or with `--json`, an
/// error goes to stdout as `{"error":{"code":…,"message":…}}`.
func runNotifyctl(_ arguments: [String]) -> ExitCode {
    let (global, rest, globalError) = GlobalOptions.extract(arguments)
    let context = Context(socketFlag: global.socket, json: global.json)
    do throws(CommandFailure) {
        if let globalError { throw CommandFailure(.usage, globalError.message + "\nRun `notifyctl --help` for usage.") }
        return try dispatch(rest, context)
    } catch {
        if context.json {
            Terminal.out(error.json)
        } else {
            Terminal.error(error.message)
        }
        return error.code
    }
}

private func dispatch(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
    // A closure, not `\.name`: a key path through the existential metatype crashes the
    // 6.3 compiler here.
    let names = Subcommands.all.map { $0.name }
    guard let name = arguments.first else {
        throw CommandFailure(.usage, "no command given; one of: \(names.joined(separator: ", "))\nRun `notifyctl --help` for usage.")
    }
    switch name {
    case "--help", "-h":
        Terminal.out(mainHelp())
        return .done
    case "--version":
        Terminal.out("notifyctl \(NotifydVersion.described())")
        return .done
    case "help":
        guard let topic = arguments.dropFirst().first else {
            Terminal.out(mainHelp())
            return .done
        }
        // `help` answers --help as every command does.
        if topic == "--help" || topic == "-h" {
            Terminal.out("""
                usage: notifyctl help [COMMAND]

                Prints the list of commands, or COMMAND's usage (as `notifyctl COMMAND --help` does).
                """)
            return .done
        }
        guard let command = Subcommands.all.first(where: { $0.name == topic }) else {
            throw CommandFailure(.usage, "no command '\(topic)'\(Suggestion.hint(topic, among: names))\nRun `notifyctl --help` for the list.")
        }
        Terminal.out(command.help + "\n\n" + GlobalOptions.help)
        return .done
    default:
        break
    }
    if name.hasPrefix("-") {
        let known = GlobalOptions.names + ["--help", "--version"]
        throw CommandFailure(.usage, "unknown option '\(name)'\(Suggestion.hint(name, among: known))\nRun `notifyctl --help` for usage.")
    }
    guard let command = Subcommands.all.first(where: { $0.name == name }) else {
        throw CommandFailure(.usage, "unknown command '\(name)'\(Suggestion.hint(name, among: names))\nRun `notifyctl --help` for the list.")
    }
    let commandArguments = Array(arguments.dropFirst())
    let options = commandArguments.prefix { $0 != "--" }
    if options.contains("--help") || options.contains("-h") {
        Terminal.out(command.help + "\n\n" + GlobalOptions.help)
        return .done
    }
    return try command.run(commandArguments, context)
}

signal(SIGPIPE, SIG_IGN)
// _exit, not exit: everything notifyctl says is written by now (Terminal writes with
// write(2), nothing is buffered), and exit's handlers would only take apart the Swift
// runtime's static objects, which the kernel does faster: `ping` 1.84–2.11 -> 1.73–1.82 ms.
_exit(runNotifyctl(Array(CommandLine.arguments.dropFirst())).rawValue)
