#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol

/// Every setting notifyd knows, with the one place that checks and applies its value.
/// The same key works in the config file, as `NOTIFYD_<KEY>` in the environment and, for
/// some, as a flag.
struct SettingKey: Sendable {
    let name: String
    let flag: String?
    let summary: String
    /// The value in effect when none is given, as `--check-config` shows it.
    let defaultText: String
    /// False for `state_dir`, which a running notifyd cannot leave: a change waits for a
    /// restart. Every other setting is taken up by a reload.
    var reloadable = true
    /// What the flag takes, as the usage names it (`URL`, `D`): nil for a switch.
    var flagValue: String? = nil
    /// A file or directory: `~`, `$HOME` and other variables in it are expanded
    /// (`PathExpansion`) before `apply` sees it.
    var isPath = false
    let apply: @Sendable (inout ResolvedSettings, String) throws(SettingError) -> Void

    var environmentName: String { "NOTIFYD_" + name.uppercased() }

    /// The flag as the usage writes it, with what it takes (`--retry-min D`).
    var flagUsage: String? { flag.map { $0 + (flagValue.map { " " + $0 } ?? "") } }

    struct SettingError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static let all: [SettingKey] = [
        SettingKey(name: "backend", flag: "--backend", summary: "the app backend; a login may name its own", defaultText: "none", flagValue: "URL") { settings, value throws(SettingError) in
            // The form is checked here; plain http is checked once `allow_insecure_http` is known.
            do throws(CoreError) {
                settings.runtime.backend = try BackendURL.validate(value, allowInsecureHTTP: true)
            } catch {
                throw SettingError(error.description)
            }
        },
        SettingKey(name: "backend_api", flag: "--backend-api", summary: "the backend's API: registrations (the tutorial's AppBackend) or installations (the backend service)",
                   defaultText: "registrations", flagValue: "API") { settings, value throws(SettingError) in
            guard let dialect = BackendDialect(rawValue: value.trimmingSpaces().lowercased()) else {
                throw SettingError("must be \(BackendDialect.names), not '\(value)'")
            }
            settings.runtime.backendAPI = dialect
        },
        SettingKey(name: "allow_insecure_http", flag: "--allow-insecure-http", summary: "allow plain http to a backend on another machine (sends the password in clear)",
                   defaultText: "false") { settings, value throws(SettingError) in
            switch value.lowercased() {
            case "true", "yes", "1", "on": settings.runtime.allowInsecureHTTP = true
            case "false", "no", "0", "off": settings.runtime.allowInsecureHTTP = false
            default: throw SettingError("must be true or false, not '\(value)'")
            }
        },
        SettingKey(name: "platform", flag: nil, summary: "platform of a first token: \(Platform.names)", defaultText: "apns") { settings, value throws(SettingError) in
            settings.runtime.platform = try platform(value)
        },
        SettingKey(name: "send_platforms", flag: nil, summary: "default platforms for send, comma-separated", defaultText: "apns") { settings, value throws(SettingError) in
            do {
                settings.runtime.sendPlatforms = try Platform.list(value.split(separator: ",").map(String.init))
            } catch {
                throw SettingError("\(error)")
            }
        },
        SettingKey(name: "android_name", flag: nil, summary: "the name the backend knows Android by: \(androidNames) (fcm and gcm for backends that predate FCM v1)",
                   defaultText: "fcmv1") { settings, value throws(SettingError) in
            // One wording for a name that is no platform and one that is not Android's.
            guard let chosen = Platform(rawValue: value.trimmingSpaces().lowercased()), chosen.isAndroid else {
                throw SettingError("must be \(androidNames), not '\(value)'")
            }
            settings.runtime.androidName = chosen
        },
        SettingKey(name: "refresh_interval", flag: "--refresh-interval", summary: "re-register after this long even if nothing changed", defaultText: "24h", flagValue: "D") { settings, value throws(SettingError) in
            settings.runtime.policy.refreshInterval = try duration(value, atLeast: 1)
        },
        SettingKey(name: "retry_min", flag: "--retry-min", summary: "first wait after a failed attempt", defaultText: "5s", flagValue: "D") { settings, value throws(SettingError) in
            let seconds = try duration(value, atLeast: 0.01)
            settings.runtime.retry.initial = seconds
        },
        SettingKey(name: "retry_max", flag: "--retry-max", summary: "longest wait between failed attempts", defaultText: "5m", flagValue: "D") { settings, value throws(SettingError) in
            let seconds = try duration(value, atLeast: 0.01)
            settings.runtime.retry.maximum = seconds
        },
        SettingKey(name: "request_timeout", flag: "--request-timeout", summary: "how long one backend request may take", defaultText: "30s", flagValue: "D") { settings, value throws(SettingError) in
            settings.runtime.requestTimeout = try duration(value, atLeast: 0.1)
        },
        SettingKey(name: "escape", flag: nil, summary: "tutorial (notifyd escapes message text) or none (the backend does)", defaultText: "tutorial") { settings, value throws(SettingError) in
            guard let escaping = NotificationText.Escaping(rawValue: value.lowercased()) else {
                throw SettingError("must be tutorial or none, not '\(value)'")
            }
            settings.runtime.escaping = escaping
        },
        SettingKey(name: "outbox_expiry", flag: nil, summary: "how long an undelivered message is retried", defaultText: "7d") { settings, value throws(SettingError) in
            settings.runtime.outboxExpiry = try duration(value, atLeast: 1)
        },
        SettingKey(name: "outbox_max", flag: nil, summary: "queued messages past which send is refused (each platform's copy counts)",
                   defaultText: "\(RuntimeSettings.defaultOutboxMax)") { settings, value throws(SettingError) in
            settings.runtime.outboxMax = try wholeNumber(value, upTo: RuntimeSettings.largestOutboxMax)
        },
        SettingKey(name: "outbox_max_bytes", flag: nil, summary: "bytes of queued message text past which send is refused (each copy counts)",
                   defaultText: "256MiB") { settings, value throws(SettingError) in
            settings.runtime.outboxMaxBytes = try byteCount(value, upTo: RuntimeSettings.largestOutboxMaxBytes)
        },
        SettingKey(name: "max_connections", flag: nil, summary: "most connections to the backend at once (HTTP/2: 100 requests each)",
                   defaultText: "\(RuntimeSettings.defaultConnections)") { settings, value throws(SettingError) in
            settings.runtime.maxConnections = try wholeNumber(value, upTo: RuntimeSettings.mostConnections)
        },
        SettingKey(name: "keep_alive", flag: nil, summary: "how long an unused connection to the backend is kept", defaultText: "2m") { settings, value throws(SettingError) in
            settings.runtime.keepAlive = try duration(value, atLeast: 1)
        },
        SettingKey(name: "log_level", flag: "--log-level", summary: "error, warning, notice, info or debug", defaultText: "notice", flagValue: "LEVEL") { settings, value throws(SettingError) in
            guard let level = LogLevel(name: value) else { throw SettingError("must be error, warning, notice, info or debug, not '\(value)'") }
            settings.runtime.logLevel = level
        },
        SettingKey(name: "log_file", flag: "--log-file", summary: "append the log to this file instead of standard error", defaultText: "standard error", flagValue: "FILE",
                   isPath: true) { settings, value throws(SettingError) in
            guard value.hasPrefix("/") else { throw SettingError("must be an absolute path (~ and $HOME are expanded)") }
            settings.runtime.logFile = value
        },
        SettingKey(name: "password_command", flag: nil, summary: "a command printing the password, e.g. `pass show notifyd`", defaultText: "none") { settings, value throws(SettingError) in
            guard !value.trimmingSpaces().isEmpty else { throw SettingError("is empty") }
            settings.passwordCommand = value
        },
        SettingKey(name: "password_timeout", flag: nil, summary: "how long the password command may take before it is stopped", defaultText: "60s") { settings, value throws(SettingError) in
            settings.runtime.passwordTimeout = try duration(value, atLeast: 0.1)
        },
        SettingKey(name: "password_store", flag: nil, summary: "where login keeps the password: auto (the keyring if the session has one, else the file), keyring or file", defaultText: "auto") { settings, value throws(SettingError) in
            guard let store = PasswordStore(rawValue: value) else { throw SettingError("must be auto, keyring or file, not '\(value)'") }
            settings.runtime.passwordStore = store
        },
        SettingKey(name: "state_dir", flag: "--state-dir", summary: "state, credentials and outbox; ~/.local/state/notifyd without $XDG_STATE_HOME", defaultText: "$XDG_STATE_HOME/notifyd",
                   reloadable: false, flagValue: "DIR", isPath: true) { settings, value throws(SettingError) in
            guard value.hasPrefix("/") else { throw SettingError("must be an absolute path (~ and $HOME are expanded)") }
            settings.stateDirectory = value
        },
    ]

    static func named(_ name: String) -> SettingKey? { all.first { $0.name == name } }

    /// `Platform.androidNames`, as a sentence lists them.
    private static let androidNames = "fcmv1, fcm or gcm"

    private static func platform(_ value: String) throws(SettingError) -> Platform {
        guard let platform = Platform(rawValue: value.lowercased()) else {
            throw SettingError("unknown platform '\(value)'; use \(Platform.names)")
        }
        return platform
    }

    /// A count from 1 to `largest`, written in decimal digits only (no sign, no `0x`).
    /// A count of bytes: digits, with KiB, MiB or GiB (or K, M, G) after them for 1024,
    /// 1024² or 1024³ of them.
    private static func byteCount(_ value: String, upTo largest: Int) throws(SettingError) -> Int {
        let text = value.trimmingSpaces()
        let digits = String(text.prefix { $0.isASCII && $0.isNumber })
        let unit = text.dropFirst(digits.count).lowercased()
        let scale: Int? = switch unit {
        case "", "b": 1
        case "k", "kib": 1 << 10
        case "m", "mib": 1 << 20
        case "g", "gib": 1 << 30
        default: nil
        }
        guard let scale, let count = Int(digits), count.multipliedReportingOverflow(by: scale).overflow == false,
              (1...largest).contains(count * scale) else {
            throw SettingError("must be a number of bytes from 1 to \(largest >> 30)GiB (such as 256MiB or 1GiB), not '\(value)'")
        }
        return count * scale
    }

    private static func wholeNumber(_ value: String, upTo largest: Int) throws(SettingError) -> Int {
        let digits = value.trimmingSpaces()
        guard digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let count = Int(digits), (1...largest).contains(count) else {
            throw SettingError("must be a whole number from 1 to \(largest), not '\(value)'")
        }
        return count
    }

    private static func duration(_ value: String, atLeast minimum: Double) throws(SettingError) -> Double {
        guard let seconds = DurationText.parse(value) else {
            throw SettingError("'\(value)' is not a duration; write it like 90s, 15m, 24h or 7d")
        }
        guard seconds >= minimum else { throw SettingError("must be at least \(minimum) s") }
        // Far more than any setting needs, and far less than what a timer or a request's
        // timeout can hold: a wait of 1e300d cannot be armed, and stopped notifyd.
        guard seconds <= longestDuration else { throw SettingError("must be at most 36500d (100 years)") }
        return seconds
    }

    private static let longestDuration: Double = 36500 * 86400
}
