import NotifyProtocol

/// How a command that changed the registration tells what became of it: one line, and
/// an exit code a script can act on.
enum OutcomeReport {
    /// Sends a command that waits for the registration (the socket read waits a little
    /// longer than the daemon does) and reports what became of it.
    /// `secret`: what `login` was given, as it is named where it is kept ("password", "API key").
    static func run<Command: WaitingCommand>(_ command: Command, changed: String, secret: String = "password",
                                             context: Context) throws(CommandFailure) -> ExitCode {
        let outcome = try context.call(command, timeout: (command.timeout ?? Command.defaultTimeout) + 30)
        return report(outcome, changed: changed, secret: secret, context: context)
    }

    private static func report(_ outcome: RegistrationOutcome, changed: String, secret: String, context: Context) -> ExitCode {
        let registration = outcome.registration
        var changed = changed
        if let token = outcome.tokenPlatform { changed += " for \(token.platform.rawValue) (\(why(token.chosen)))" }
        let (line, code) = describe(registration, settled: outcome.settled, changed: changed)
        if !context.json {
            let line = PrintableText.line(line)
            if code == .failed { Terminal.error(line) } else { Terminal.out(line) }
            // Registered, but to no avail: a legacy Android name, which nothing reaches.
            if registration.state == .registered, let warning = registration.message {
                Terminal.error(PrintableText.line("warning: \(warning)"))
            }
            // `login`: where the password went, said every time, as `ssh-add` names the key.
            if let kept = outcome.passwordKept, let detail = kept.detail {
                Terminal.out(PrintableText.line("The \(secret) is kept \(detail)."))
            }
            if let warning = outcome.passwordKept?.warning { Terminal.error(PrintableText.line("warning: \(warning)")) }
        }
        return code
    }

    private static func why(_ chosen: String) -> String {
        switch chosen {
        case "given": "as --platform says"
        case "kept": "kept from the previous token; --platform to change"
        case "token_form": "a token in <…> form is APNs's"
        default: "the `platform` setting, for a first token; --platform to change"
        }
    }

    /// 0 when what was asked is done and the registration either succeeded or waits only
    /// for the user (a login with no token yet); 4 only while notifyd retries the backend
    /// by itself; 1 when the backend refused.
    static func describe(_ registration: RegistrationStatus, settled: Bool, changed: String) -> (String, ExitCode) {
        let id = registration.id.map { " (id \($0))" } ?? ""
        let message = registration.message ?? StateText.words(registration.state)
        switch registration.state {
        case .registered:
            return ("\(changed); registered\(id).", .done)
        case .notLoggedIn:
            return ("\(changed); it is registered once you log in: `notifyctl login USER`.", .done)
        case .noToken:
            return ("\(changed); " + (registration.message ?? "no device token yet: `notifyctl set-token TOKEN` registers one") + ".", .done)
        case let state where StateText.waitsForUser(state):
            return ("\(changed); not registering yet: \(message).", .done)
        case .unauthorized:
            return ("Not accepted: \(message).", .failed)
        case .rejected:
            return ("\(changed), but \(message).", .failed)
        case .retrying:
            let next = registration.nextAttemptAt.map { " (next attempt \(TimeText.relative($0)))" } ?? ""
            return ("\(changed); not registered yet: \(message)\(next).", .later)
        case .registering where !settled:
            return ("\(changed); still waiting for the backend; `notifyctl status` shows the outcome.", .later)
        default:
            return ("\(changed); not registered yet: \(message).", .later)
        }
    }
}
