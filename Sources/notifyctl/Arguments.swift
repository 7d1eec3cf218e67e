import NotifyProtocol

/// A small command-line scanner: `--name value`, `--name=value`, boolean flags, `--` to
/// end options, and positionals (a lone `-` is a positional meaning stdin).
struct Arguments {
    private var remaining: [String]
    private(set) var positionals: [String] = []

    init(_ arguments: some Sequence<String>) {
        remaining = Array(arguments)
    }

    /// Splits options from positionals. `valued` names the options that take a value;
    /// `flags` those that do not. Anything else starting with `-` is a usage error.
    /// An option in `repeatable` keeps every value it is given, joined by
    /// `Arguments.valueSeparator` (`values(of:)` splits them); others keep their last.
    static func parse(_ arguments: [String], valued: Set<String>, flags: Set<String>,
                      repeatable: Set<String> = []) throws(UsageError) -> (options: [String: String], flags: Set<String>, positionals: [String]) {
        var options: [String: String] = [:]
        var seenFlags = Set<String>()
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            if valued.contains(name) {
                let value: String
                if let inline {
                    value = inline
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError("\(name) needs a value")
                }
                if repeatable.contains(name), let earlier = options[name] {
                    options[name] = earlier + Self.valueSeparator + value
                } else {
                    options[name] = value
                }
            } else if flags.contains(name), inline == nil {
                seenFlags.insert(name)
            } else {
                let known = Array(valued) + Array(flags) + ["--help"] + GlobalOptions.names
                throw UsageError("unknown option '\(argument)'" + Suggestion.hint(name, among: known))
            }
        }
        return (options, seenFlags, positionals)
    }
}

extension Arguments {
    /// Between the values of a repeated option: a control character no value it takes holds.
    static let valueSeparator = "\u{1F}"

    /// The values a repeatable option was given, in order.
    static func values(of joined: String?) -> [String] {
        // Not `components(separatedBy:)`: FoundationEssentials' string extensions bring
        // much of it into notifyctl, whose every start relocates it (`NotifyctlLinkTests`).
        joined.map { $0.split(separator: Character(valueSeparator), omittingEmptySubsequences: false).map(String.init) } ?? []
    }
}

struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
