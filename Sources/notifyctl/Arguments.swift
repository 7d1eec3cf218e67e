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
    static func parse(_ arguments: [String], valued: Set<String>, flags: Set<String>) throws(UsageError) -> (options: [String: String], flags: Set<String>, positionals: [String]) {
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
                if let inline {
                    options[name] = inline
                } else if index < arguments.count {
                    options[name] = arguments[index]
                    index += 1
                } else {
                    throw UsageError("\(name) needs a value")
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

struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
