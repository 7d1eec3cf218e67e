import NotifyProtocol
import NotifySystem

enum Login: Subcommand {
    static let name = "login"
    static let summary = "log in to the backend (password prompted, or --password-stdin)"
    static let options = [
        CommandOption(name: "--backend", value: "URL", summary: "the backend for this account"),
        CommandOption(name: "--password-stdin", value: nil, summary: "read the password from standard input"),
    ] + CommandOption.waiting
    static let operand = CommandOperand.user
    static let help = """
        usage: notifyctl login [--backend URL] [--password-stdin] [--no-wait] [--timeout SECONDS] USER

        Stores the credentials notifyd uses with the backend and registers the device if a
        token is set. At a backend with backend_api = installations (the backend service),
        the secret asked for is the app's API key, kept and guarded as a password is, and
        USER is the name other users send to (the tag username:USER). The password goes to the session's keyring (Secret Service: GNOME
        Keyring, KWallet) where one answers, else to a 0600 file in the state directory; the
        `password_store` setting chooses (auto, keyring, file), and login says where it went. The credentials are checked by the backend first (with
        that registration, or a request of their own): a password the backend refuses is
        not saved, the previous login stays in force, and the exit status is 1. When the
        backend cannot be reached, the login is saved unchecked only if nobody is logged in;
        otherwise nothing changes and the exit status is 1. The password is prompted
        without echo; scripts pass it on standard input with --password-stdin. It is never
        taken on the command line.

          --backend URL      the backend for this account (default: the backend of the
                             login in force, else notifyd's `backend` setting)
          --password-stdin   read the password from standard input
          --no-wait          return at once instead of waiting for the registration
          --timeout SECONDS  how long to wait for the registration, in seconds or as 2m (default 10)

        When notifyd gets the password itself (password_command in its config, or the
        systemd credential notifyd-password), no password is asked for.

        Exit status: 0 logged in, and registered or waiting only for you (no token yet:
        `notifyctl set-token`); 1 the backend refused the credentials; 2 usage error;
        3 notifyd not reachable; 4 logged in, and notifyd keeps retrying the backend by itself,
        or the check had not finished within the timeout (not logged in yet: the login takes
        effect by itself if the backend accepts it; `notifyctl status` tells).
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 1...1)
        let user = parsed.positionals[0]
        // Which secret the backend takes: a user's password, or the backend service's API key.
        let status = try context.call(StatusCommand(), timeout: 5, printJSON: false)
        let secret = (status.backendAPI ?? .registrations).secretName
        // What is read next is the password: no core file of this process may hold it.
        _ = CoreDumps.forbid()
        let password: String?
        if parsed.flags.contains("--password-stdin") {
            var bytes = Terminal.readStandardInput()
            if bytes.last == 0x0A { bytes.removeLast() }
            if bytes.last == 0x0D { bytes.removeLast() }
            password = String(decoding: bytes, as: UTF8.self)
            guard password?.isEmpty == false else { throw CommandFailure(.usage, "login: the \(secret) is empty") }
        } else {
            if let source = status.daemon.passwordSource, source != "file" {
                // notifyd gets the password itself (password_command or a systemd credential).
                password = nil
            } else {
                password = try askPassword(user: user, backend: parsed.options["--backend"] ?? status.backend, secret: secret)
            }
        }
        let (wait, timeout) = try waitOptions(parsed.flags, parsed.options)
        let command = LoginCommand(user: user, password: password, backend: parsed.options["--backend"], wait: wait, timeout: timeout)
        return try OutcomeReport.run(command, changed: "Logged in as \(user)", secret: secret, context: context)
    }

    /// Asks at the terminal, naming the backend the password (or API key) is for.
    private static func askPassword(user: String, backend: String?, secret: String) throws(CommandFailure) -> String {
        let place = backend.map { " at \(PrintableText.line($0))" } ?? ""
        let prompt = secret == "password" ? "Password for \(user)\(place): " : "API key\(place) (for \(user)): "
        guard let typed = Terminal.readSecret(prompt: prompt) else {
            throw CommandFailure(.usage, "login: no terminal to ask for the \(secret); pass it on standard input with --password-stdin")
        }
        guard !typed.isEmpty else { throw CommandFailure(.usage, "login: the \(secret) is empty") }
        return typed
    }
}

enum Logout: Subcommand {
    static let name = "logout"
    static let summary = "delete the registration, then forget the credentials"
    static let options = [CommandOption(name: "--force", value: nil, summary: "forget the credentials even if the registration stays"),
                          CommandOption(name: "--forget-old-backends", value: nil, summary: "also give up deleting registrations at old backends")]
    static let help = """
        usage: notifyctl logout [--force] [--forget-old-backends]

        Deletes this device's registration at the backend, then forgets the stored
        credentials. If the backend cannot be reached the credentials are kept (so the
        registration can still be deleted later) unless --force is given. When nobody is
        logged in, it says so and exits 0.

        A registration left at a backend notifyd no longer uses (the backend changed while
        that one was down) is still deleted there once it answers, with the password of the
        login that made it, which is kept for that until then; logout says so.
        --forget-old-backends gives those deletions up, and forgets those passwords (each
        registration left behind is named); it works when nobody is logged in, too.

          --force                forget the credentials even if the registration could not be deleted
          --forget-old-backends  give up deleting the registrations left at old backends
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 0...0)
        let result: LogoutResult
        let command = LogoutCommand(force: parsed.flags.contains("--force") ? true : nil,
                                    forgetOldBackends: parsed.flags.contains("--forget-old-backends") ? true : nil)
        do {
            result = try context.call(command, timeout: 120)
        } catch where error.wireCode == .notLoggedIn {
            // Already where logout leads: a script's `notifyctl logout` succeeds.
            if context.json { context.printJSON(.object(["user": .null])) } else { Terminal.out("Not logged in; nothing to do.") }
            return .done
        }
        if !context.json {
            if let user = result.user {
                let deleted = result.deletedId.map { "deleted registration \($0), " } ?? ""
                Terminal.out(PrintableText.line("Logged out \(user): \(deleted)credentials forgotten."))
            } else {
                Terminal.out("Not logged in.")
            }
            if let warning = result.warning { Terminal.error(PrintableText.line("warning: \(warning)")) }
            for line in result.oldBackendsForgotten ?? [] { Terminal.out(PrintableText.line(line[line.startIndex].uppercased() + line.dropFirst() + ".")) }
            if let kept = result.passwordsKept, !kept.isEmpty {
                Terminal.out("Still kept until that backend answers (`notifyctl logout --forget-old-backends` gives it up):")
                for line in kept { Terminal.out(PrintableText.line("  " + line)) }
            }
        }
        return .done
    }
}
