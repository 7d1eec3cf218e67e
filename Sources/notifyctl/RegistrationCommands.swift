import NotifyProtocol

enum SetToken: Subcommand {
    static let name = "set-token"
    static let summary = "set the device's push token and register it"
    static let options = [CommandOption(name: "--platform", value: "NAME", summary: "the token's push platform", values: .platform)] + CommandOption.waiting
    static let help = """
        usage: notifyctl set-token [--platform apns|fcmv1|wns] [--no-wait] [--timeout SECONDS] TOKEN

        Sets the device token (the "handle") and registers it, and says for which platform
        and why that one. Each platform's token is checked by its shape: APNs, whole bytes
        of hex in any case, with or without spaces and <> ("<3f2a1b9c 5d7e...>" works, and
        is always APNs); FCM, letters, digits and - _ : . only; WNS, an https://
        channel URI on a host under notify.windows.com. A token set before `login` is kept
        and registered once credentials arrive.

          --platform NAME    apns, fcmv1 or wns (default: the platform of the token
                             before, else the `platform` setting, apns by default);
                             fcm and gcm name Android too: whichever name is given,
                             it registers under notifyd's android_name (fcmv1 by
                             default, fcm or gcm for a backend that predates FCM v1)
          --no-wait          return at once instead of waiting for the registration
          --timeout SECONDS  how long to wait for the registration, in seconds or as 2m (default 10)

        Exit status: 0 registered, or saved and waiting only for you (no login yet);
        1 refused; 2 invalid token; 4 saved, and notifyd keeps retrying the backend by itself.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 1...1)
        var platform: Platform?
        if let name = parsed.options["--platform"] {
            guard let chosen = Platform(rawValue: name.lowercased()) else {
                throw CommandFailure(.usage, "set-token: unknown platform '\(name)'; use one of \(Platform.names)")
            }
            platform = chosen
        }
        let (wait, timeout) = try waitOptions(parsed.flags, parsed.options)
        let command = SetTokenCommand(token: parsed.positionals[0], platform: platform, wait: wait, timeout: timeout)
        return try OutcomeReport.run(command, changed: "Token set", context: context)
    }
}

enum SetTags: Subcommand {
    static let name = "set-tags"
    static let summary = "set extra registration tags (none to clear) and re-register"
    static let options = CommandOption.waiting
    static let help = """
        usage: notifyctl set-tags [--no-wait] [--timeout SECONDS] [TAG ...]

        Replaces the extra tags of the registration (the backend adds username:<you> by
        itself) and registers again. No tags clears them. A tag holds letters, digits and
        _ @ # . : - only, up to 120 characters; username:… is refused. The tutorial
        backend sends each message to from:<sender> as well: a device with the tag
        from:bob receives every message bob sends, whoever it is to.

        Exit status: 0 registered, or saved and waiting only for you (no login or token
        yet); 1 refused; 4 saved, and notifyd keeps retrying the backend by itself.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 0...1000)
        let (wait, timeout) = try waitOptions(parsed.flags, parsed.options)
        let changed = parsed.positionals.isEmpty ? "Tags cleared" : "Tags set to \(parsed.positionals.joined(separator: " "))"
        return try OutcomeReport.run(SetTagsCommand(tags: parsed.positionals, wait: wait, timeout: timeout), changed: changed, context: context)
    }
}

enum Register: Subcommand {
    static let name = "register"
    static let summary = "register now, even if the registration is fresh"
    static let options = CommandOption.waiting
    static let help = """
        usage: notifyctl register [--no-wait] [--timeout SECONDS]

        Sends the registration to the backend now, whether or not it is due, and resumes
        registering after `unregister` or a refusal.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 0...0)
        let (wait, timeout) = try waitOptions(parsed.flags, parsed.options)
        return try OutcomeReport.run(RegisterCommand(wait: wait, timeout: timeout), changed: "Registration sent", context: context)
    }
}

enum Unregister: Subcommand {
    static let name = "unregister"
    static let summary = "delete the registration at the backend, keep the credentials"
    static let help = """
        usage: notifyctl unregister

        Deletes this device's registration at the backend and stops registering it until
        `notifyctl register` or a new token or tags. The credentials are kept. When the
        backend cannot take the deletion now (down, throttling, no network), notifyd
        keeps trying, across restarts, and `notifyctl status` shows it.

        Exit status: 0 deleted (or nothing to delete); 1 refused; 4 not deleted yet,
        and notifyd keeps trying by itself.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        let result = try context.call(UnregisterCommand(), timeout: 120)
        if let pending = result.deletionPending {
            if !context.json {
                let registration = result.registration
                let why = registration.message ?? "retrying automatically"
                let next = registration.nextAttemptAt.map { " (next attempt \(TimeText.relative($0)))" } ?? ""
                Terminal.out(PrintableText.line("Registering is now off, but registration \(pending) is not deleted at the backend yet: \(why)\(next)."))
            }
            return .later
        }
        if !context.json {
            Terminal.out(result.deletedId.map { PrintableText.line("Deleted registration \($0).") } ?? "No registration to delete; registering is now off.")
        }
        return .done
    }
}
