import NotifyProtocol

enum Send: Subcommand {
    static let name = "send"
    static let summary = "send a notification to a user (queued if the backend is down)"
    static let options = [
        CommandOption(name: "--to", value: "USER", summary: "the user to notify"),
        CommandOption(name: "--tag", value: "TAG", summary: "send to devices with this tag (installations backend)", repeatable: true),
        CommandOption(name: "--action", value: "ACTION", summary: "the notification's action (installations backend)"),
        CommandOption(name: "--silent", value: nil, summary: "a silent, background notification (installations backend)"),
        CommandOption(name: "--pns", value: "LIST", summary: "push platforms, comma-separated", values: .platforms),
        CommandOption(name: "--wait", value: nil, summary: "wait for the backend's answer"),
        CommandOption(name: "--no-queue", value: nil, summary: "fail instead of queueing for later"),
        CommandOption(name: "--timeout", value: "SECONDS", summary: "seconds to wait"),
    ]
    static let help = """
        usage: notifyctl send --to USER [--pns LIST] [--wait] [--no-queue] [--timeout SECONDS] MESSAGE|-
               notifyctl send [--to USER] [--tag TAG]... [--action ACTION] [--silent] [...] MESSAGE|-

        Sends MESSAGE (or standard input, with -) to USER's devices through the backend,
        one request per platform. Any text arrives as typed: quotes, backslashes, newlines,
        <, & and emoji included.

        At a backend with backend_api = installations (the backend service of Microsoft's
        newer tutorials), one request goes to every platform, to the devices tagged
        username:USER and those with any TAG:

          --tag TAG          send to the devices with this tag; repeat for more
          --action ACTION    the action the app receives (default: notification)
          --silent           a silent notification, which wakes the app without
                             showing anything (MESSAGE may then be empty)

        If the backend cannot take it now (network down, timeout, 408, 429, 5xx), the
        message waits in notifyd's outbox, on disk, and is retried in order until it is
        delivered or expires; `notifyctl outbox` shows it.

          --to USER          the recipient's user name
          --pns LIST         platforms, comma-separated: apns, fcmv1, wns (fcm and
                             gcm are Android too: each is sent under notifyd's
                             android_name, fcmv1 by default)
                             (default: notifyd's send_platforms, else apns)
          --wait             wait until delivered (or failed, or the timeout)
          --no-queue         fail now instead of queueing
          --timeout SECONDS  how long to wait, in seconds or as 2m (default 30)

        "accepted by the backend" means the backend answered 200; the tutorial backend does
        not say how many devices it reached (it may be none).

        Exit status: 0 accepted by the backend, 1 failed (not queued), 2 usage error,
        3 notifyd not reachable, 4 queued for later delivery.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 1...1)
        let to = parsed.options["--to"]
        let tags = Arguments.values(of: parsed.options["--tag"])
        guard to != nil || !tags.isEmpty else { throw usageError("missing --to USER (the recipient), or --tag TAG") }
        var message = parsed.positionals[0]
        if message == "-" {
            var bytes = Terminal.readStandardInput()
            // `echo text |` adds a newline the user did not mean as part of the message.
            if bytes.last == 0x0A { bytes.removeLast() }
            // Not repaired into U+FFFD behind the sender's back: the message is text.
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CommandFailure(.usage, "send: the message on standard input is not UTF-8 text")
            }
            message = text
        }
        // notifyd says exactly how much a platform takes; past this it would not even read
        // the line (`line_too_long`), which says nothing of the message.
        if message.utf8.count > 65_536 {
            throw usageError("the message is \(message.utf8.count) bytes, far more than a push carries (a few KB); shorten it")
        }
        if parsed.flags.contains("--wait") && parsed.flags.contains("--no-queue") {
            throw usageError("--wait and --no-queue do not go together (--no-queue never waits)")
        }
        let timeout = try seconds(parsed.options["--timeout"], option: "--timeout")
        let command = SendCommand(
            to: to, message: message,
            pns: parsed.options["--pns"].map { $0.split(separator: ",").map(String.init) },
            wait: parsed.flags.contains("--wait") ? true : nil,
            queue: parsed.flags.contains("--no-queue") ? false : nil,
            timeout: timeout,
            tags: tags.isEmpty ? nil : tags,
            action: parsed.options["--action"],
            silent: parsed.flags.contains("--silent") ? true : nil)
        let result = try context.call(command, timeout: (timeout ?? SendCommand.defaultTimeout) + 60)
        var code = ExitCode.done
        for delivery in result.deliveries {
            let line = DeliveryText.line(delivery)
            switch delivery.state {
            case .delivered:
                if !context.json { Terminal.out(line) }
            case .queued:
                if !context.json { Terminal.out(line) }
                if code == .done { code = .later }
            default:
                if !context.json { Terminal.error(line) }
                code = .failed
            }
        }
        // `--wait` ran out: said, so that a message still queued is not read as forgotten.
        if command.wait == true, !context.json, result.deliveries.contains(where: { $0.state == .queued }) {
            let waited = Int((timeout ?? SendCommand.defaultTimeout).rounded())
            Terminal.out("Not delivered within the \(waited) s waited: notifyd keeps trying by itself; `notifyctl outbox` follows it.")
        }
        return code
    }
}

enum Outbox: Subcommand {
    static let name = "outbox"
    static let summary = "list, retry or cancel messages waiting to be sent"
    static let options = [CommandOption(name: "--purge", value: nil, summary: "forget the failed and expired messages"),
                          CommandOption(name: "--limit", value: "N", summary: "list at most N messages (default 20)"),
                          CommandOption(name: "--after", value: "ID", summary: "list the messages after ID (the next page)"),
                          CommandOption(name: "--all", value: nil, summary: "list every message, without the counts")]
    static let operand = CommandOperand.actions([("retry", "try waiting messages now (or only ID)"), ("cancel", "remove one message without sending it")])
    static let help = """
        usage: notifyctl outbox [--purge] [--limit N] [--after ID | --all]
               notifyctl outbox retry [ID]
               notifyctl outbox cancel ID

        Lists the messages notifyd has accepted but not delivered yet (why, and when it
        tries next), and those that failed or expired after they were queued: first a
        line per recipient (how many wait, are held or failed, the oldest, the next
        attempt), then the first 20 messages, and how to see the next ones.

          --purge      forget the failed and expired ones, and those held for an account
                       that is no longer logged in
          --limit N    list at most N messages (default 20)
          --after ID   list the messages after ID: the next page, as the listing says
          --all        list every message, one after another, without the counts (for
                       scripts: with --json, the whole outbox)
          retry [ID]   try the waiting messages now (or only ID, and those queued with it
                       for the same recipient and platform), also those held until the
                       next login
          cancel ID    remove one message, waiting or failed, without sending it

        An ID is the one listed (0000001002-apns) or its number (1002, or 1002-apns).
        Ids are never reused; after a restart they go on from a mark notifyd writes
        ahead, so they may jump (from 7 to 1002).
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        switch arguments.first {
        case "retry": return try retry(Array(arguments.dropFirst()), context)
        case "cancel": return try cancel(Array(arguments.dropFirst()), context)
        default: break
        }
        let parsed = try parse(arguments, positionals: 0...0)
        let all = parsed.flags.contains("--all")
        var limit: Int?
        if !all {
            let text = parsed.options["--limit"] ?? "20"
            guard let count = Int(text), count >= 1 else { throw CommandFailure(.usage, "outbox: --limit takes a whole number from 1, not '\(text)'") }
            limit = count
        } else if parsed.options["--limit"] != nil || parsed.options["--after"] != nil {
            throw CommandFailure(.usage, "outbox: --all lists every message; it goes with neither --limit nor --after")
        }
        let command = OutboxCommand(purge: parsed.flags.contains("--purge") ? true : nil, limit: limit, after: all ? nil : parsed.options["--after"])
        let result = try context.call(command, timeout: 10)
        guard !context.json else { return .done }
        if let purged = result.purged { Terminal.out("Forgot \(Plural.count(purged, "failed or expired message")).") }
        if result.total ?? result.deliveries.count == 0 {
            Terminal.out("The outbox is empty.")
        }
        for recipient in result.recipients ?? [] {
            Terminal.out(PrintableText.line(describe(recipient)))
        }
        for delivery in result.deliveries {
            let preview = delivery.preview.map { " \"\($0)\"" } ?? ""
            Terminal.out(PrintableText.line("\(delivery.id)\(preview)") + "\n  " + DeliveryText.line(delivery))
        }
        if let next = result.nextAfter, let total = result.total {
            Terminal.out("… \(total) in all: `notifyctl outbox --after \(next)` lists the next ones, `--all` every one.")
        }
        return .done
    }

    /// One recipient's line: "bob: 3 waiting, 1 held, 0 failed; oldest …, next attempt …".
    private static func describe(_ recipient: OutboxRecipient) -> String {
        var parts = ["\(recipient.waiting) waiting"]
        if recipient.held > 0 { parts.append("\(recipient.held) held") }
        if recipient.failed > 0 { parts.append("\(recipient.failed) failed") }
        let next = recipient.nextAttemptAt.map { ", next attempt \(TimeText.relative($0))" } ?? ""
        return "\(recipient.to): " + parts.joined(separator: ", ") + "; oldest \(TimeText.stamped(recipient.oldest))" + next
    }

    private static func retry(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, taking: [], positionals: 0...1)
        let result = try context.call(OutboxRetryCommand(delivery: parsed.positionals.first), timeout: 10)
        if !context.json {
            Terminal.out(result.retried == 0 ? "Nothing is waiting to be retried." : "Trying \(Plural.count(result.retried, "waiting message")) now; `notifyctl outbox` shows how it went.")
        }
        return .done
    }

    private static func cancel(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        guard arguments.contains(where: { !$0.hasPrefix("-") }) else { throw usageError("cancel: missing ID (`notifyctl outbox` lists them)") }
        let parsed = try parse(arguments, taking: [], positionals: 1...1)
        let result = try context.call(OutboxCancelCommand(delivery: parsed.positionals[0]), timeout: 10)
        if !context.json { Terminal.out(PrintableText.line("Cancelled \(result.delivery.id) to \(result.delivery.to) (\(result.delivery.pns)); it will not be sent.")) }
        return .done
    }
}

/// One line per delivery, for `send` and `outbox`, whatever its fields hold.
enum DeliveryText {
    static func line(_ delivery: DeliveryStatus) -> String {
        PrintableText.line(words(delivery))
    }

    private static func words(_ delivery: DeliveryStatus) -> String {
        var delivery = delivery
        // A request to an installations backend, which goes to every platform.
        if delivery.pns == "all" { delivery.pns = "all platforms" }
        let why = delivery.error.map { ": \($0.message)" } ?? ""
        switch delivery.state {
        case .delivered:
            return "\(delivery.pns): accepted by the backend for \(delivery.to)"
        case .queued:
            let next = delivery.nextAttemptAt.map { "; next attempt \(TimeText.relative($0))" } ?? ""
            let attempts = delivery.attempts > 0 ? " after \(Plural.count(delivery.attempts, "attempt"))" : ""
            return "\(delivery.pns): queued for \(delivery.to)\(attempts)\(why)\(next)"
        case .expired:
            return "\(delivery.pns): expired undelivered to \(delivery.to) after \(Plural.count(delivery.attempts, "attempt"))\(why)"
        case .cancelled:
            return "\(delivery.pns): cancelled, not sent to \(delivery.to)"
        default:
            return "\(delivery.pns): failed to send to \(delivery.to)\(why)"
        }
    }
}
