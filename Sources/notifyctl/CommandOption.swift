/// An option of a notifyctl command: the one table the parser takes it from and the shell
/// completions are generated from (`notifyctl completion SHELL`), so neither can miss one.
struct CommandOption: Sendable {
    /// What the shells offer for the option's value.
    enum Values: Sendable {
        case none
        case platform
        /// A comma-separated list of platforms.
        case platforms
        case files
    }

    let name: String
    /// Its value's placeholder (`URL`), or nil for a flag.
    let value: String?
    /// A few words for the completion menus.
    let summary: String
    var values: Values = .none
    /// Given more than once, it keeps every value (`send --tag`).
    var repeatable = false

    /// `--no-wait` and `--timeout`, of the commands that wait for the registration.
    static let waiting = [
        CommandOption(name: "--no-wait", value: nil, summary: "return without waiting for the registration"),
        CommandOption(name: "--timeout", value: "SECONDS", summary: "seconds to wait for the registration"),
    ]

    /// The options every command takes, before or after its name.
    static let global = [
        CommandOption(name: "--socket", value: "PATH", summary: "notifyd's socket", values: .files),
        CommandOption(name: "--json", value: nil, summary: "print results, and errors, as JSON"),
    ]

    /// Android's current name before its older ones, which the shells offer in this order.
    static let platformNames = ["apns", "fcmv1", "fcm", "gcm", "wns"]
}

/// What a command's operand is, for the shells.
enum CommandOperand: Sendable {
    case none
    case user
    /// Words the command takes first (`outbox retry`), with their summaries.
    case actions([(name: String, summary: String)])
    case command
}
