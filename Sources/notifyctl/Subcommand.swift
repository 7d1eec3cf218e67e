/// One notifyctl subcommand: its help and what it does.
protocol Subcommand: SendableMetatype {
    static var name: String { get }
    /// One line for `notifyctl --help`.
    static var summary: String { get }
    /// The whole `notifyctl NAME --help` text.
    static var help: String { get }
    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode
}

extension Subcommand {
    static func parse(_ arguments: [String], valued: Set<String> = [], flags: Set<String> = [], positionals range: ClosedRange<Int>) throws(CommandFailure) -> (options: [String: String], flags: Set<String>, positionals: [String]) {
        let parsed: (options: [String: String], flags: Set<String>, positionals: [String])
        do {
            parsed = try Arguments.parse(arguments, valued: valued, flags: flags)
        } catch {
            throw CommandFailure(.usage, "\(name): \(error.message)\n\(help)")
        }
        guard range.contains(parsed.positionals.count) else {
            let what = parsed.positionals.count < range.lowerBound ? "missing arguments" : "too many arguments"
            throw CommandFailure(.usage, "\(name): \(what)\n\(help)")
        }
        return parsed
    }

    /// `--no-wait` and `--timeout`, as the commands that wait for the registration take them.
    static func waitOptions(_ flags: Set<String>, _ options: [String: String]) throws(CommandFailure) -> (wait: Bool?, timeout: Double?) {
        (flags.contains("--no-wait") ? false : nil, try seconds(options["--timeout"], option: "--timeout"))
    }

    static func seconds(_ text: String?, option: String) throws(CommandFailure) -> Double? {
        guard let text else { return nil }
        guard let value = Double(text.hasSuffix("s") ? String(text.dropLast()) : text), value >= 0, value.isFinite else {
            throw CommandFailure(.usage, "\(name): \(option) takes a number of seconds, not '\(text)'")
        }
        return value
    }
}
