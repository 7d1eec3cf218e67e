/// A path setting as people write it in a config file, expanded as ssh_config does: a
/// leading `~` is $HOME, and `$NAME` or `${NAME}` is that environment variable; the XDG
/// base directories have their specified defaults when unset (`$XDG_STATE_HOME` is
/// ~/.local/state). A variable that is not set is a problem, never an empty string that
/// would turn `$STATE/notifyd.log` into `/notifyd.log`.
enum PathExpansion {
    struct Problem: Error {
        var message: String
    }

    static let xdgDefaults = ["XDG_CONFIG_HOME": ".config", "XDG_STATE_HOME": ".local/state", "XDG_DATA_HOME": ".local/share",
                              "XDG_CACHE_HOME": ".cache"]

    static func expand(_ path: String, environment: [String: String]) throws(Problem) -> String {
        var text = Substring(path)
        var result = ""
        if text == "~" || text.hasPrefix("~/") {
            result = try variable("HOME", environment)
            text = text.dropFirst()
        } else if text.hasPrefix("~") {
            throw Problem(message: "'~user' is not expanded; write the path, or ~/ for your own home")
        }
        while let dollar = text.firstIndex(of: "$") {
            result += text[..<dollar]
            text = text[text.index(after: dollar)...]
            let braced = text.first == "{"
            if braced { text = text.dropFirst() }
            let name = text.prefix { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
            guard !name.isEmpty, !(name.first?.isNumber ?? false) else {
                throw Problem(message: "'$' must begin a variable, $NAME or ${NAME}")
            }
            text = text.dropFirst(name.count)
            if braced {
                guard text.first == "}" else { throw Problem(message: "'${\(name)' has no closing '}'") }
                text = text.dropFirst()
            }
            result += try variable(String(name), environment)
        }
        return result + text
    }

    private static func variable(_ name: String, _ environment: [String: String]) throws(Problem) -> String {
        if let value = environment[name], !value.isEmpty { return value }
        if let relative = xdgDefaults[name], let home = environment["HOME"], !home.isEmpty { return home + "/" + relative }
        throw Problem(message: "$\(name) is not set")
    }
}
