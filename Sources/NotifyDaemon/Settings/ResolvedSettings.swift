#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol
import NotifySocket

/// notifyd's settings after merging defaults, the config file, the environment and the
/// flags, in that order of increasing precedence.
public struct ResolvedSettings: Sendable {
    /// Every setting a running notifyd uses, and takes up again at a reload.
    public var runtime = RuntimeSettings(keyringTool: "secret-tool")
    /// Where `runtime.passwordSource` comes from, unless a systemd credential wins over it.
    public var passwordCommand: String?
    /// The one setting a running notifyd cannot take up: it waits for a restart.
    public var stateDirectory: String?
    /// Which file was read (or looked for), and where each effective value came from.
    public var configPath: String
    /// True when `--config` or `$NOTIFYD_CONFIG` named it: then it must exist.
    public var configNamed = false
    public var origins: [String: String] = [:]
    public var values: [String: String] = [:]
    /// What is worth saying but changes nothing: a key the file gives twice.
    public var warnings: [String] = []

    /// Merges everything; `flags` are the values given on the command line. The socket is
    /// not among the settings: notifyctl reads no config file, so it is given the same way
    /// to both (`--socket` or `$NOTIFYD_SOCKET`).
    public static func resolve(flags: [SettingValue], configFlag: String?, environment: [String: String],
                               readFile: (String) throws(FileContents.Problem) -> Data = ResolvedSettings.readConfigFile) -> (ResolvedSettings, [SettingProblem]) {
        let (configPath, explicit) = ConfigFile.location(flag: configFlag, environment: environment)
        var settings = ResolvedSettings(configPath: configPath)
        settings.configNamed = explicit
        var problems: [SettingProblem] = []
        var values: [SettingValue] = []

        // `--config /dev/null` is an empty config, as with `ssh -F /dev/null`: a device, and
        // writable by all, it would fail the checks below that a real file must pass.
        if !ConfigFile.isNullDevice(configPath) {
            do {
                let parsed = ConfigFile.parse([UInt8](try readFile(configPath)), path: configPath)
                values += parsed.values
                problems += parsed.problems
                settings.warnings = ConfigFile.repeatedKeys(parsed.values, path: configPath)
                if let unsafe = ConfigFileCheck.problem(configPath) {
                    problems.append(SettingProblem(origin: configPath, key: nil, message: unsafe))
                }
            } catch .missing {
                if explicit { problems.append(SettingProblem(origin: configPath, key: nil, message: "the config file does not exist (it was named by --config or $NOTIFYD_CONFIG)")) }
            } catch {
                // Present but unusable, named or not: starting without the settings it holds
                // would run notifyd with values the user did not mean. (A default file in a
                // directory this user may not search, such as another user's home, is not seen
                // to be there, and is as absent.)
                if explicit || FileManager.default.fileExists(atPath: configPath) {
                    problems.append(SettingProblem(origin: configPath, key: nil, message: "the config file cannot be read: \(error)"))
                }
            }
        }
        for key in SettingKey.all {
            if let value = environment[key.environmentName], !value.isEmpty {
                values.append(SettingValue(key: key.name, value: value, origin: "environment \(key.environmentName)"))
            }
        }
        values += flags

        for value in values {
            guard let key = SettingKey.named(value.key) else {
                let names = SettingKey.all.map(\.name)
                problems.append(SettingProblem(origin: value.origin, key: value.key,
                                               message: "unknown setting\(Suggestion.hint(value.key, among: names)) (known: \(names.joined(separator: ", ")))"))
                continue
            }
            var text = value.value
            var origin = value.origin
            if key.isPath {
                do throws(PathExpansion.Problem) {
                    text = try PathExpansion.expand(text, environment: environment)
                } catch {
                    problems.append(SettingProblem(origin: value.origin, key: value.key, message: error.message))
                    continue
                }
                if text != value.value { origin += ", expanded from \(value.value)" }
            }
            do {
                try key.apply(&settings, text)
                settings.origins[key.name] = origin
                settings.values[key.name] = text
            } catch {
                problems.append(SettingProblem(origin: value.origin, key: value.key, message: error.message))
            }
        }
        settings.runtime.passwordSource = PasswordSource.detect(command: settings.passwordCommand, environment: environment)
        // Checked once every value is in: `allow_insecure_http` may come after `backend`.
        if let backend = settings.runtime.backend {
            do throws(CoreError) {
                settings.runtime.backend = try BackendURL.validate(backend, allowInsecureHTTP: settings.runtime.allowInsecureHTTP)
            } catch {
                problems.append(SettingProblem(origin: settings.origins["backend"] ?? "settings", key: "backend", message: error.description))
            }
        }
        if settings.runtime.retry.initial > settings.runtime.retry.maximum {
            // Named where one of the two was given: retry_max alone may be below the default retry_min.
            if let origin = settings.origins["retry_min"] {
                problems.append(SettingProblem(origin: origin, key: "retry_min", message: "is longer than retry_max"))
            } else {
                problems.append(SettingProblem(origin: settings.origins["retry_max"] ?? "settings", key: "retry_max",
                                               message: "is shorter than retry_min, which is \(SettingKey.named("retry_min")?.defaultText ?? "5s") by default"))
            }
        }
        return (settings, inLineOrder(problems, file: configPath))
    }

    public static func readConfigFile(_ path: String) throws(FileContents.Problem) -> Data {
        try FileContents.load(path, limit: ConfigFile.largestFile)
    }

    init(configPath: String) {
        self.configPath = configPath
    }

    /// The daemon's configuration, once the socket path has been resolved.
    public func configuration(socketFlag: String?, environment: [String: String]) throws(SocketError) -> DaemonConfiguration {
        let location = try SocketLocation.resolve(flag: socketFlag, environment: environment)
        return DaemonConfiguration(socket: location, stateDirectory: stateDirectory ?? DaemonConfiguration.defaultStateDirectory(environment: environment),
                                   settings: runtime)
    }

    /// For `--check-config`: every setting with its effective value and where it came
    /// from, defaults included.
    public func summary(environment: [String: String]) -> [String] {
        SettingKey.all.map { key in
            guard let origin = origins[key.name] else {
                let value = key.name == "state_dir" ? DaemonConfiguration.defaultStateDirectory(environment: environment) : key.defaultText
                return "\(key.name) = \(value) (default)"
            }
            return PrintableText.line("\(key.name) = \(values[key.name] ?? "") (from \(origin))")
        }
    }

    /// The settings whose effective value differs in `other`, split into those a running
    /// notifyd takes up and those that wait for a restart.
    public func changes(from inEffect: [String: String]) -> (reloadable: [String], restartNeeded: [String]) {
        let changed = SettingKey.all.filter { inEffect[$0.name] != values[$0.name] }
        return (changed.filter(\.reloadable).map(\.name), changed.filter { !$0.reloadable }.map(\.name))
    }

    /// Problems in the config file first, in line order (a value problem is found after
    /// the file was read, a syntax problem while reading it), then the others as given.
    private static func inLineOrder(_ problems: [SettingProblem], file: String) -> [SettingProblem] {
        func line(_ problem: SettingProblem) -> Int? {
            guard problem.origin.hasPrefix(file + ":") else { return nil }
            return Int(problem.origin.dropFirst(file.count + 1))
        }
        let inFile = problems.filter { line($0) != nil }.sorted { line($0)! < line($1)! }
        return inFile + problems.filter { line($0) == nil }
    }

    public static var keyNames: [String] { SettingKey.all.map(\.name) }

}
