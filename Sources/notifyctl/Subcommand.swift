import NotifyProtocol

/// One notifyctl subcommand: its help and what it does.
protocol Subcommand: SendableMetatype {
    static var name: String { get }
    /// One line for `notifyctl --help`.
    static var summary: String { get }
    /// The whole `notifyctl NAME --help` text.
    static var help: String { get }
    /// Its options: what `parse` takes, and what the shells complete.
    static var options: [CommandOption] { get }
    /// What the shells complete for its first operand.
    static var operand: CommandOperand { get }
    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode
}

extension Subcommand {
    static var options: [CommandOption] { [] }
    static var operand: CommandOperand { .none }

    /// The arguments after the command's name, by `options` (or `taking`, for a word of
    /// the command's own, such as `outbox retry`).
    static func parse(_ arguments: [String], taking: [CommandOption]? = nil, positionals range: ClosedRange<Int>) throws(CommandFailure) -> (options: [String: String], flags: Set<String>, positionals: [String]) {
        let taken = taking ?? options
        let parsed: (options: [String: String], flags: Set<String>, positionals: [String])
        do {
            parsed = try Arguments.parse(arguments, valued: Set(taken.filter { $0.value != nil }.map(\.name)),
                                         flags: Set(taken.filter { $0.value == nil }.map(\.name)),
                                         repeatable: Set(taken.filter(\.repeatable).map(\.name)))
        } catch {
            throw usageError(error.message)
        }
        let count = parsed.positionals.count
        if count < range.lowerBound {
            let missing = operands.dropFirst(count).prefix(range.lowerBound - count)
            throw usageError(missing.isEmpty ? "missing an argument" : "missing " + missing.joined(separator: " "))
        }
        if count > range.upperBound {
            throw usageError("unexpected argument '\(parsed.positionals[range.upperBound])'")
        }
        return parsed
    }

    /// A usage error: what is wrong, and one line on where the whole usage is.
    static func usageError(_ message: String) -> CommandFailure {
        CommandFailure(.usage, "\(name): \(message)\nRun `notifyctl \(name) --help` for its usage.")
    }

    /// The operands the usage line names (`TOKEN`, `USER`), for "missing TOKEN".
    static var operands: [String] {
        guard let usage = help.split(separator: "\n").first else { return [] }
        var depth = 0
        var words: [Substring] = []
        for word in usage.split(separator: " ").dropFirst(2 + name.split(separator: " ").count) {
            let opened = word.filter { $0 == "[" }.count
            let closed = word.filter { $0 == "]" }.count
            if depth == 0 && opened == 0 { words.append(word) }
            depth += opened - closed
        }
        var result: [String] = []
        var index = 0
        while index < words.count {
            // `--to USER` is an option with its value, not an operand.
            if words[index].hasPrefix("-") && words[index] != "-" {
                index += 2
                continue
            }
            result.append(String(words[index]))
            index += 1
        }
        return result
    }

    /// `--no-wait` and `--timeout`, as the commands that wait for the registration take them.
    static func waitOptions(_ flags: Set<String>, _ options: [String: String]) throws(CommandFailure) -> (wait: Bool?, timeout: Double?) {
        (flags.contains("--no-wait") ? false : nil, try seconds(options["--timeout"], option: "--timeout"))
    }

    /// Seconds, or a duration as notifyd's config takes it (`90`, `90s`, `2m`, `1h`).
    static func seconds(_ text: String?, option: String) throws(CommandFailure) -> Double? {
        guard let text else { return nil }
        guard let value = DurationText.parse(text) else {
            throw usageError("\(option) takes seconds or a duration such as 90s, 2m or 1h, not '\(text)'")
        }
        return value
    }
}
