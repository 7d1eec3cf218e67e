#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyClient
import NotifyProtocol

enum Ping: Subcommand {
    static let name = "ping"
    static let summary = "check that notifyd answers; print its version and build"
    static let help = """
        usage: notifyctl ping

        Prints notifyd's version and build (the package's version, or the git commit
        it was built from), protocol version and process id; fails when no answer
        comes within 5 seconds.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        let result = try context.call(PingCommand(), timeout: 5)
        if !context.json {
            let described = NotifydVersion.described(version: result.version, protocol: result.protocol, build: result.build)
            Terminal.out(PrintableText.line("notifyd \(described), pid \(result.pid)"))
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
        token, platform and tags, what happens next, and the outbox: how many messages
        wait, how many are held until the next login, how many failed, and the next
        attempt; while requests find no route to the backend, since when notifyd is
        offline; and a setting a reload changed that waits for notifyd to start again
        (state_dir). Never shows the password. Fails when no answer comes within 5
        seconds.
        Exit status, as `ssh-add -l` has one for scripts:
          0  registered
          1  something needs you: not logged in, no token, no backend, registration
             turned off (`unregister`), or the backend refused the login or the
             registration
          3  notifyd cannot be reached
          4  notifyd is at it by itself: registering, retrying the backend (for the
             registration, or messages waiting for it), or deleting a registration
             the backend could not delete yet
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        let status = try context.call(StatusCommand(), timeout: 5)
        let registration = status.registration
        if !context.json {
            let secret = (status.backendAPI ?? .registrations).secretName
            let secretLabel = secret == "password" ? "password:     " : "API key:      "
            let id = registration.installationId.map { " (installation \($0))" } ?? registration.id.map { " (id \($0))" } ?? ""
            var lines = ["registration: \(StateText.words(registration.state))" + id]
            if let message = registration.message { lines.append("              \(message)") }
            if let registeredAt = registration.registeredAt { lines.append("registered:   \(TimeText.stamped(registeredAt))") }
            if let next = registration.nextAttemptAt {
                lines.append("\([.retrying, .unregistering].contains(registration.state) ? "next attempt: " : "refresh due:  ")\(TimeText.stamped(next))")
            }
            if registration.failures > 0 { lines.append("failures:     \(registration.failures) since the last success") }
            if let elsewhere = status.loginElsewhere {
                lines.append("user:         (not logged in here) \(elsewhere.user) is logged in at \(elsewhere.origin) only, where the \(secret) was given;")
                lines.append("              `notifyctl login \(elsewhere.user)` logs in at this backend")
            } else {
                lines.append("user:         \(status.account?.user ?? "(not logged in)")")
            }
            if let problem = status.account?.passwordProblem {
                lines.append("\(secretLabel)\(problem); retrying")
            } else if let source = status.account?.passwordSource {
                let kept = ["keyring": "in the keyring", "file": "in the credentials file (0600)", "command": "from password_command",
                            "systemd-credential": "from the systemd credential"]
                lines.append("\(secretLabel)\(kept[source] ?? source)")
            }
            let api = status.backendAPI.map { " (backend_api = \($0))" } ?? ""
            lines.append("backend:      \(status.backend ?? "(none configured)")\(status.backend == nil ? "" : api)")
            if let since = status.network?.backendUnreachableSince {
                let every = status.network?.checkingEvery.map { "; checking every \(Int($0.rounded())) s" } ?? ""
                lines.append("              unreachable since \(TimeText.stamped(since))\(every)")
            }
            for old in status.retiredRegistrations ?? [] {
                lines.append("old backend:  \(old.backend): deleting \(old.api == .installations ? "installation" : "registration") \(old.id) (made as \(old.user))")
                if let since = old.unreachableSince { lines.append("              unreachable since \(TimeText.stamped(since))") }
                if let next = old.nextAttemptAt {
                    lines.append("              next attempt \(TimeText.stamped(next))\(old.error.map { ": last failed: \($0)" } ?? "")")
                }
            }
            lines.append("token:        \(status.device.token ?? "(none)")")
            // Android given under one name goes to the backend under android_name.
            let registeredAs = registration.registered.map(\.platform).flatMap { $0 != status.device.platform ? " (registered as \($0), android_name)" : nil }
            lines.append("platform:     \(status.device.platform)\(registeredAs ?? "")")
            lines.append("tags:         \(status.device.tags.isEmpty ? "(none)" : status.device.tags.joined(separator: " "))")
            if let outbox = status.outbox {
                lines.append("outbox:       \(Self.describe(outbox))")
                if let warning = Self.nearlyFull(outbox) { lines.append("              \(warning)") }
            }
            if let offline = status.network?.offlineSince {
                lines.append("network:      offline since \(TimeText.stamped(offline)): no route to the backend; retrying when the network comes back")
            }
            lines.append("notifyd:      \(status.daemon.version), pid \(status.daemon.pid), \(status.daemon.socket)")
            if let waiting = status.daemon.restartNeeded, !waiting.isEmpty {
                lines.append("restart for:  \(waiting.joined(separator: ", ")) (changed in the configuration; in effect once notifyd starts again)")
            }
            // Each field on its own line, whatever it holds.
            Terminal.out(lines.map(PrintableText.line).joined(separator: "\n"))
        }
        return exitCode(registration.state, retryingMessages: Self.retrying(status))
    }

    /// Registered, but messages wait for the backend: notifyd is retrying it, which a script
    /// watching `status` must hear (exit 4), not "all is well".
    static func retrying(_ status: StatusResult) -> Bool {
        let waiting = status.outbox.map { $0.waiting > 0 && $0.nextAttemptAt != nil } ?? false
        return waiting || status.network?.backendUnreachableSince != nil || status.network?.offlineSince != nil
    }

    static func exitCode(_ state: RegistrationState, retryingMessages: Bool = false) -> ExitCode {
        switch state {
        case .registered: retryingMessages ? .later : .done
        case .unauthorized, .rejected: .failed
        case let waiting where StateText.waitsForUser(waiting): .failed
        default: .later
        }
    }
}

extension Status {
    /// A warning once the queue has reached 80% of `outbox_max`, before `send` is refused.
    static func nearlyFull(_ outbox: OutboxSummary) -> String? {
        if let bytes = outbox.bytes, let limit = outbox.bytesLimit, limit > 0, bytes * 5 >= limit * 4,
           outbox.limit.map({ (outbox.waiting + outbox.held) * 5 < $0 * 4 }) ?? true {
            let state = bytes >= limit ? "full" : "nearly full"
            return "\(state): \(ByteText.describe(bytes)) of outbox_max_bytes \(ByteText.describe(limit)) queued; send is refused at the bound (nothing queued is dropped)"
        }
        guard let limit = outbox.limit, limit > 0 else { return nil }
        let queued = outbox.waiting + outbox.held
        guard queued * 5 >= limit * 4 else { return nil }
        let state = queued >= limit ? "full" : "nearly full"
        return "\(state): \(queued) of outbox_max \(limit) queued; send is refused at the bound (nothing queued is dropped)"
    }

    static func describe(_ outbox: OutboxSummary) -> String {
        guard outbox.waiting + outbox.held + outbox.failed > 0 else { return "empty" }
        var parts = ["\(outbox.waiting) waiting"]
        if outbox.held > 0 { parts.append("\(outbox.held) held until the next login") }
        parts.append("\(outbox.failed) failed")
        let next = outbox.nextAttemptAt.map { "; next attempt \(TimeText.relative($0))" } ?? ""
        return parts.joined(separator: ", ") + next
    }
}

enum Watch: Subcommand {
    static let name = "watch"
    static let summary = "follow registration, send and network events as they happen"
    static let help = """
        usage: notifyctl watch [--json]

        Prints the current registration, then one line per event until interrupted, each
        with the local time: "14:02:11  send: 0000000013-fcm to bob: delivered".

        With --json, one JSON object per line instead, the current registration first as
        a {"event":"registration",...} line:
        {"event":"registration",...} when the registration changes,
        {"event":"send",...} when a message is queued, delivered, fails or expires,
        {"event":"network",...} when notifyd goes offline or online, a link, address or
        default route comes up, or the machine wakes from sleep, and
        {"event":"shutdown",...} when notifyd stops normally, after which watch exits 0.
        If the connection ends without that, or the first answer takes more than 5
        seconds, watch exits 1.
        """

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        _ = try parse(arguments, positionals: 0...0)
        // The first answer comes as fast as `status`'s; then events, for as long as they come.
        let client = try context.connect(timeout: 5)
        do {
            let (_, raw) = try client.call(WatchCommand())
            let first = currentRegistrationEvent(raw, time: TimeText.now())
            if context.json {
                context.printJSON(first)
            } else {
                Terminal.out(WatchText.line(first))
            }
            client.timeout = nil
            while true {
                let line = try client.nextEvent()
                Terminal.out(context.json ? PrintableText.jsonLine(String(decoding: line, as: UTF8.self)) : WatchText.line(line))
                // `nextEvent` gives lines that passed `JSONShape.check`.
                if JSONValue(parsing: line)?["event"]?.stringValue == EventName.shutdown {
                    return .done
                }
            }
        } catch {
            throw context.failure(error)
        }
    }

    /// watch's answer, `{"registration":{...}}`, as the registration event it would be: every
    /// line watch prints is then told apart by its "event" key alone.
    static func currentRegistrationEvent(_ result: JSONValue, time: Date) -> JSONValue {
        guard case .object(var fields) = result else { return result }
        fields["event"] = .string(EventName.registration)
        fields["time"] = .string(WireDate.format(time))
        return .object(fields)
    }
}
