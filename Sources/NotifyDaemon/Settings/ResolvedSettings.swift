import Foundation
import NotifyCore
import NotifyProtocol
import NotifySocket

/// notifyd's settings after merging defaults, the config file, the environment and the
/// flags, in that order of increasing precedence.
public struct ResolvedSettings: Sendable {
    public var backend: String?
    public var platform: Platform = .apns
    public var sendPlatforms: [Platform] = [.apns]
    public var policy = RegistrationPolicy()
    public var requestTimeout = 30.0
    public var outbox = Outbox.Settings()
    public var logLevel: LogLevel = .notice
    public var passwordCommand: String?
    public var stateDirectory: String?
    /// Which file was read (or looked for), and where each effective value came from.
    public var configPath: String
    public var origins: [String: String] = [:]
    public var values: [String: String] = [:]

    /// Merges everything; `flags` are the values given on the command line. The socket is
    /// not among the settings: notifyctl reads no config file, so it is given the same way
    /// to both (`--socket` or `$NOTIFYD_SOCKET`).
    public static func resolve(flags: [SettingValue], configFlag: String?, environment: [String: String],
                               readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) }) -> (ResolvedSettings, [SettingProblem]) {
        let (configPath, explicit) = ConfigFile.location(flag: configFlag, environment: environment)
        var settings = ResolvedSettings(configPath: configPath)
        var problems: [SettingProblem] = []
        var values: [SettingValue] = []

        if let text = readFile(configPath) {
            let parsed = ConfigFile.parse(text, path: configPath)
            values += parsed.values
            problems += parsed.problems
        } else if explicit {
            problems.append(SettingProblem(origin: configPath, key: nil, message: "the config file cannot be read"))
        }
        for key in SettingKey.all {
            if let value = environment[key.environmentName], !value.isEmpty {
                values.append(SettingValue(key: key.name, value: value, origin: "environment \(key.environmentName)"))
            }
        }
        values += flags

        for value in values {
            guard let key = SettingKey.named(value.key) else {
                problems.append(SettingProblem(origin: value.origin, key: value.key, message: "unknown setting; known: \(SettingKey.all.map(\.name).joined(separator: ", "))"))
                continue
            }
            do {
                try key.apply(&settings, value.value)
                settings.origins[key.name] = value.origin
                settings.values[key.name] = value.value
            } catch {
                problems.append(SettingProblem(origin: value.origin, key: value.key, message: error.message))
            }
        }
        if settings.policy.backoff.initial > settings.policy.backoff.maximum {
            problems.append(SettingProblem(origin: settings.origins["retry_min"] ?? "settings", key: "retry_min", message: "is longer than retry_max"))
        }
        return (settings, problems)
    }

    init(configPath: String) {
        self.configPath = configPath
    }

    /// The daemon's configuration, once the socket path has been resolved.
    public func configuration(socketFlag: String?, environment: [String: String]) throws(SocketError) -> DaemonConfiguration {
        let location = try SocketLocation.resolve(flag: socketFlag, environment: environment)
        return DaemonConfiguration(
            socket: location, stateDirectory: stateDirectory ?? DaemonConfiguration.defaultStateDirectory(environment: environment),
            backend: backend, logLevel: logLevel, policy: policy, requestTimeout: requestTimeout,
            platform: platform, sendPlatforms: sendPlatforms, outbox: outbox,
            passwordSource: PasswordSource.detect(command: passwordCommand, environment: environment))
    }

    /// For `--check-config`: each setting with its effective value and where it came from.
    public var summary: [String] {
        SettingKey.all.compactMap { key in
            guard let origin = origins[key.name] else { return nil }
            return "\(key.name) = \(values[key.name] ?? "") (from \(origin))"
        }
    }

    public static var keyNames: [String] { SettingKey.all.map(\.name) }

    /// The flags that map to settings, for `main`'s parser.
    public static var flagNames: [String: String] {
        Dictionary(uniqueKeysWithValues: SettingKey.all.compactMap { key in key.flag.map { ($0, key.name) } })
    }
}
