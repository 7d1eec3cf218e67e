/// What the user's systemd manager says of notifyd's units, read from `systemctl --user show`
/// output, and what to do about it when notifyd cannot be reached at the socket
/// notifyd.socket listens on. Asking systemd, not guessing from the error: a socket unit
/// that gave up, one that is masked and one that was never started fail the same way.
public struct SystemdUnits: Sendable, Equatable {
    public struct Unit: Sendable, Equatable {
        public var loadState: String
        public var activeState: String
        public var result: String
        public var unitFileState: String
    }

    public var socket: Unit?
    public var service: Unit?

    /// The properties `systemctl --user show` is asked for, in `--property=` form.
    public static let properties = "--property=Id,LoadState,ActiveState,Result,UnitFileState"
    public static let units = ["notifyd.socket", "notifyd.service"]

    /// Parses `Name=value` lines, one block per unit, blocks separated by a blank line.
    public init(showOutput: String) {
        for block in showOutput.split(separator: "\n", omittingEmptySubsequences: false).split(whereSeparator: \.isEmpty) {
            var fields: [Substring: Substring] = [:]
            for line in block {
                guard let equals = line.firstIndex(of: "=") else { continue }
                fields[line[..<equals]] = line[line.index(after: equals)...]
            }
            let unit = Unit(loadState: String(fields["LoadState"] ?? ""), activeState: String(fields["ActiveState"] ?? ""),
                            result: String(fields["Result"] ?? ""), unitFileState: String(fields["UnitFileState"] ?? ""))
            switch fields["Id"] {
            case "notifyd.socket": socket = unit
            case "notifyd.service": service = unit
            default: break
            }
        }
    }

    /// What to do, or nil when systemd does not know notifyd.socket (notifyd is not
    /// installed as a systemd unit for this user).
    public var advice: String? {
        guard let socket, socket.loadState != "not-found", !socket.loadState.isEmpty else { return nil }
        if socket.loadState == "masked" {
            return "notifyd.socket is masked for you. Unmask and start it with `systemctl --user unmask notifyd.socket && systemctl --user start notifyd.socket`."
        }
        if socket.activeState == "failed" || service?.result == "start-limit-hit" {
            return """
                systemd gave up starting notifyd: \(Self.whyGivenUp(socket: socket, service: service)).
                Fix what stops it (`journalctl --user -u notifyd -n 20` says, `notifyd --check-config` checks the config), then run:
                  systemctl --user reset-failed notifyd.socket notifyd.service && systemctl --user start notifyd.socket
                """
        }
        if socket.activeState == "inactive" {
            if socket.unitFileState == "disabled" {
                return "notifyd.socket is not enabled. Enable and start it with `systemctl --user enable --now notifyd.socket`."
            }
            return "notifyd.socket is stopped. Start it with `systemctl --user start notifyd.socket`."
        }
        if let service, service.activeState == "failed" {
            return "notifyd failed to start (\(service.result)). See why with `journalctl --user -u notifyd -n 20` or `notifyd --check-config`."
        }
        return nil
    }

    private static func whyGivenUp(socket: Unit, service: Unit?) -> String {
        switch socket.result {
        case "service-start-limit-hit": return "it failed to start too many times in a row (its start limit)"
        case "trigger-limit-hit": return "connections came faster than it could start (the socket's trigger limit; wait 2 s before the commands below)"
        case "", "success":
            return service?.result == "start-limit-hit" ? "it failed to start too many times in a row (its start limit)" : "notifyd.socket failed"
        default: return "notifyd.socket failed (\(socket.result))"
        }
    }
}
