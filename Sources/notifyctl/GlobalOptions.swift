/// `--json` and `--socket PATH`, which every command takes, before or after its name.
struct GlobalOptions {
    var socket: String?
    var json = false

    static let names = ["--json", "--socket"]
    static let help = """
        Global options (before or after the command):
          --socket PATH   notifyd's socket (default $NOTIFYD_SOCKET, else $XDG_RUNTIME_DIR/notifyd/notifyd.sock)
          --json          print results, and errors, as JSON on standard output
        """

    /// Takes the global options out of `arguments` (up to a `--`, after which everything
    /// is an operand) and returns the rest in order.
    static func extract(_ arguments: [String]) -> (GlobalOptions, [String], UsageError?) {
        var options = GlobalOptions()
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                rest += arguments[(index - 1)...]
                break
            }
            if argument == "--json" {
                options.json = true
            } else if argument == "--socket" {
                guard index < arguments.count else { return (options, rest, UsageError("--socket needs a path")) }
                options.socket = arguments[index]
                index += 1
            } else if argument.hasPrefix("--socket=") {
                options.socket = String(argument.dropFirst("--socket=".count))
            } else {
                rest.append(argument)
            }
        }
        return (options, rest, nil)
    }
}
