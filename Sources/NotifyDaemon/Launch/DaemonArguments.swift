import NotifyProtocol

/// notifyd's command line, read without touching anything, so that every flag can be
/// tested in-process. The flags of settings and their help come from `SettingKey`, where
/// each setting and its default are written once.
public struct DaemonArguments: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Start and serve.
        case run
        /// Check the settings and the state directory, say where each setting comes from.
        case checkConfig
        case help
        case version
    }

    public var action: Action = .run
    /// Settings given as flags, in the order given (a later one wins).
    public var settings: [SettingValue] = []
    public var configFile: String?
    public var socket: String?
    public var allowCoreDumps = false

    public init() {}

    /// A command line notifyd cannot run with; `message` says why (exit status 2).
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Reads `arguments` (without the program's name). `--help` and `--version` end the
    /// reading where they stand, as they do for most programs: what follows is not looked at.
    public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonArguments {
        var parsed = DaemonArguments()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = rest.popFirst() else { throw UsageError(message: "\(name) needs a value") }
                return next
            }
            switch name {
            case "--help", "-h":
                parsed.action = .help
                return parsed
            case "--version":
                parsed.action = .version
                return parsed
            case "--check-config":
                parsed.action = .checkConfig
            case "--allow-core-dumps":
                parsed.allowCoreDumps = true
            case "--config":
                parsed.configFile = try value()
            case "--socket":
                parsed.socket = try value()
            default:
                guard let key = SettingKey.all.first(where: { $0.flag == name }) else {
                    throw UsageError(message: "unknown option '\(argument)'")
                }
                // A switch alone means true; `--allow-insecure-http=false` says otherwise.
                let given = key.flagValue == nil ? inlineValue ?? "true" : try value()
                parsed.settings.append(SettingValue(key: key.name, value: given, origin: name))
            }
        }
        return parsed
    }

    /// `notifyd --help`.
    public static var usage: String {
        let settingFlags = SettingKey.all.compactMap { key in key.flagUsage.map { (usage: $0, key: key) } }
        let synopsis = (["[--socket PATH]", "[--config FILE]", "[--check-config]"]
            + settingFlags.map { "[\($0.usage)]" }
            + ["[--allow-core-dumps]", "[--version]", "[--help]"])
        let options: [(String, String)] = [
            ("--socket PATH", "control socket (default $NOTIFYD_SOCKET, else $XDG_RUNTIME_DIR/notifyd/notifyd.sock)"),
            ("--config FILE", "the config file (default $NOTIFYD_CONFIG, else $XDG_CONFIG_HOME/notifyd/config, else ~/.config/notifyd/config)"),
            ("--check-config", "check the settings, print where each comes from, and exit"),
        ] + settingFlags.map { flag in
            (flag.usage, "\(flag.key.summary) (default \(flag.key.defaultText))")
        } + [
            ("--allow-core-dumps", "let the system write a core file on a crash, and debuggers attach (off by default: a core file would hold the password)"),
            ("--version", "print the version and exit"),
            ("--help", "print this help and exit"),
        ]
        return """
            usage: notifyd \(wrapped(synopsis, width: 92, indent: 15).dropFirst(15))

            notifyd registers this device with the app backend, keeps the registration fresh,
            sends notifications, and answers notifyctl on a Unix socket. It runs in the foreground;
            a service manager (systemd, launchd) or `notifyd &` puts it in the background.
            SIGTERM (or `notifyctl stop`) stops it; SIGHUP (or `notifyctl reload`) reloads the config.
            Exit status: 0 stopped normally, 1 could not start, 2 usage error, 78 configuration error
            (also from --check-config when it finds a problem).

            \(options.map { option(name: $0.0, text: $0.1) }.joined(separator: "\n"))

            Every setting can also be given in the config file as `key = value` or in the
            environment as NOTIFYD_<KEY>; flags win over the environment, which wins over the file.
            Keys: \(SettingKey.all.map(\.name).joined(separator: ", ")).
            Durations: 90, 90s, 15m, 24h, 7d.
            """
    }

    /// `  --flag VALUE    text`, the text wrapped in a column of its own.
    private static func option(name: String, text: String) -> String {
        let column = 27
        let first = "  " + name
        let lines = wrapped(text.split(separator: " ").map(String.init), width: 92, indent: column).split(separator: "\n", omittingEmptySubsequences: false)
        if first.count < column - 1 {
            return first + String(repeating: " ", count: column - first.count) + lines[0].dropFirst(column) + lines.dropFirst().map { "\n" + $0 }.joined()
        }
        return first + "\n" + lines.joined(separator: "\n")
    }

    /// `words` in lines of at most `width` characters, each indented by `indent` spaces;
    /// a word (`[--log-file FILE]`) is never cut.
    private static func wrapped(_ words: [String], width: Int, indent: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = margin
        for word in words {
            if line.count > indent && line.count + 1 + word.count > width {
                lines.append(line)
                line = margin
            }
            line += (line.count > indent ? " " : "") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
