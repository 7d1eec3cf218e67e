import Foundation
import NotifyCore
import NotifyDaemon
import NotifyProtocol
import Testing

/// Settings from the config file, the environment and flags.
@Suite struct SettingsTests {
    static let path = "/home/alice/.config/notifyd/config"
    static let home = ["HOME": "/home/alice"]

    static func resolve(file: String?, environment: [String: String] = home, flags: [SettingValue] = [], configFlag: String? = nil) -> (ResolvedSettings, [SettingProblem]) {
        ResolvedSettings.resolve(flags: flags, configFlag: configFlag, environment: environment) { _ throws(FileContents.Problem) in
            guard let file else { throw .missing }
            return Data(file.utf8)
        }
    }

    @Test func defaultsWithoutAnyFile() {
        let (settings, problems) = Self.resolve(file: nil)
        #expect(problems.isEmpty)
        #expect(settings.configPath == Self.path)
        #expect(settings.runtime.backend == nil)
        #expect(settings.runtime.policy.refreshInterval == 86400)
        #expect(settings.runtime.sendPlatforms == [.apns])
        #expect(settings.runtime.escaping == .tutorial)
        #expect(settings.runtime.maxConnections == 16)
        #expect(settings.runtime.logLevel == .notice)
    }

    @Test func everyKeyIsReadFromTheFile() {
        let file = """
            # notifyd settings
            backend = https://backend.example
            platform = fcm
            send_platforms = apns, wns
            android_name = gcm
            refresh_interval = 12h
            retry_min = 2s
            retry_max = 10m
            request_timeout = 15s
            escape = none
            outbox_expiry = 2d
            max_connections = 3
            keep_alive = 90s
            log_level = debug
            password_command = "pass show notifyd # not a comment"
            state_dir = /var/lib/notifyd   # a trailing comment
            """
        let (settings, problems) = Self.resolve(file: file)
        #expect(problems.isEmpty, "\(problems)")
        #expect(settings.runtime.backend == "https://backend.example")
        #expect(settings.runtime.platform == .fcm)
        #expect(settings.runtime.sendPlatforms == [.apns, .wns])
        #expect(settings.runtime.androidName == .gcm)
        #expect(settings.runtime.policy.refreshInterval == 12 * 3600)
        #expect(settings.runtime.policy.backoff.initial == 2)
        #expect(settings.runtime.retry.maximum == 600)
        #expect(settings.runtime.requestTimeout == 15)
        #expect(settings.runtime.escaping == .none)
        #expect(settings.runtime.outboxExpiry == 2 * 86400)
        #expect(settings.runtime.maxConnections == 3)
        #expect(settings.runtime.keepAlive == 90)
        #expect(settings.runtime.logLevel == .debug)
        #expect(settings.passwordCommand == "pass show notifyd # not a comment")
        #expect(settings.stateDirectory == "/var/lib/notifyd")
        #expect(settings.origins["backend"] == Self.path + ":2")
    }

    @Test func flagsWinOverTheEnvironmentWhichWinsOverTheFile() {
        let file = "backend = https://file.example\nlog_level = info\nrefresh_interval = 1h\n"
        let environment = Self.home.merging(["NOTIFYD_BACKEND": "https://environment.example", "NOTIFYD_LOG_LEVEL": "warning"]) { $1 }
        let flags = [SettingValue(key: "backend", value: "https://flag.example", origin: "--backend")]
        let (settings, problems) = Self.resolve(file: file, environment: environment, flags: flags)
        #expect(problems.isEmpty)
        #expect(settings.runtime.backend == "https://flag.example")
        #expect(settings.origins["backend"] == "--backend")
        #expect(settings.runtime.logLevel == .warning)
        #expect(settings.origins["log_level"] == "environment NOTIFYD_LOG_LEVEL")
        #expect(settings.runtime.policy.refreshInterval == 3600)
    }

    @Test func problemsNameTheFileTheLineAndTheKey() {
        let file = """
            backend = ftp://nope
            retry_min = fast

            colour = blue
            just words
            escape = sometimes
            password_command = "unterminated
            """
        let (_, problems) = Self.resolve(file: file)
        let text = problems.map(\.description)
        #expect(text.contains("\(Self.path):1: backend: 'ftp://nope' is not a backend URL; expected something like https://backend.example.com"))
        #expect(text.contains("\(Self.path):2: retry_min: 'fast' is not a duration; write it like 90s, 15m, 24h or 7d"))
        #expect(text.contains { $0.hasPrefix("\(Self.path):4: colour: unknown setting") })
        #expect(text.contains("\(Self.path):5: expected `key = value`, found 'just words'"))
        #expect(text.contains("\(Self.path):6: escape: must be tutorial or none, not 'sometimes'"))
        #expect(text.contains("\(Self.path):7: password_command: the quoted value has no closing quote"))
        #expect(problems.count == 6)
    }

    /// As notifyctl does for its commands and options.
    @Test func aMisspeltKeyIsAnsweredWithTheKeyItWasMeantToBe() {
        let (_, problems) = Self.resolve(file: "refresh_intervall = 12h\npasword_command = pass show notifyd\nvolume = 11\n")
        let text = problems.map(\.description)
        #expect(text.contains { $0.hasPrefix("\(Self.path):1: refresh_intervall: unknown setting; did you mean `refresh_interval`? (known: ") }, "\(text)")
        #expect(text.contains { $0.hasPrefix("\(Self.path):2: pasword_command: unknown setting; did you mean `password_command`? (known: ") }, "\(text)")
        #expect(text.contains { $0.hasPrefix("\(Self.path):3: volume: unknown setting (known: backend, ") }, "nothing close to it, no guess: \(text)")
    }

    @Test func environmentAndFlagProblemsSayWhereTheyCameFrom() {
        let environment = Self.home.merging(["NOTIFYD_REFRESH_INTERVAL": "soon"]) { $1 }
        let flags = [SettingValue(key: "log_level", value: "loud", origin: "--log-level")]
        let (_, problems) = Self.resolve(file: nil, environment: environment, flags: flags)
        #expect(problems.map(\.description).sorted() == [
            "--log-level: log_level: must be error, warning, notice, info or debug, not 'loud'",
            "environment NOTIFYD_REFRESH_INTERVAL: refresh_interval: 'soon' is not a duration; write it like 90s, 15m, 24h or 7d",
        ])
    }

    @Test func aConfigFileTheUserNamedMustExist() {
        let (_, named) = Self.resolve(file: nil, configFlag: "/etc/notifyd.conf")
        #expect(named.map(\.description) == ["/etc/notifyd.conf: the config file does not exist (it was named by --config or $NOTIFYD_CONFIG)"])
        let (settings, fromEnvironment) = Self.resolve(file: nil, environment: Self.home.merging(["NOTIFYD_CONFIG": "/x/config"]) { $1 })
        #expect(settings.configPath == "/x/config")
        #expect(fromEnvironment.count == 1)
        let (xdg, _) = Self.resolve(file: nil, environment: ["XDG_CONFIG_HOME": "/cfg", "HOME": "/home/alice"])
        #expect(xdg.configPath == "/cfg/notifyd/config")
    }

    @Test func maxConnectionsIsAWholeNumberFromOneTo64() {
        for good in ["1", "64", " 8 "] {
            let (settings, problems) = Self.resolve(file: nil, environment: Self.home.merging(["NOTIFYD_MAX_CONNECTIONS": good]) { $1 })
            #expect(problems.isEmpty, "\(good): \(problems)")
            #expect(settings.runtime.maxConnections == Int(good.trimmingSpaces()))
        }
        for bad in ["0", "65", "-1", "+8", "4.5", "0x10", "many", "", "99999999999999999999"] {
            let (settings, problems) = Self.resolve(file: "max_connections = \(bad)\n")
            #expect(problems.map(\.description) == ["\(Self.path):1: max_connections: must be a whole number from 1 to 64, not '\(bad)'"])
            #expect(settings.runtime.maxConnections == 16, "a bad value leaves the default")
        }
    }

    @Test func keepAliveIsASecondAtLeast() {
        for (good, seconds) in [("1s", 1.0), ("1500ms", 1.5), ("2m", 120)] {
            let (settings, problems) = Self.resolve(file: "keep_alive = \(good)\n")
            #expect(problems.isEmpty, "\(good): \(problems)")
            #expect(settings.runtime.keepAlive == seconds)
        }
        for bad in ["999ms", "0", "0.5s"] {
            let (settings, problems) = Self.resolve(file: "keep_alive = \(bad)\n")
            #expect(problems.map(\.description) == ["\(Self.path):1: keep_alive: must be at least 1.0 s"], "\(bad)")
            #expect(settings.runtime.keepAlive == 120, "a bad value leaves the default")
        }
    }

    @Test func retryMinMayNotExceedRetryMax() {
        let (_, problems) = Self.resolve(file: "retry_min = 1h\nretry_max = 1m\n")
        #expect(problems.map(\.description) == ["\(Self.path):1: retry_min: is longer than retry_max"])
        // Only retry_max given, below the default retry_min: its own line is named.
        let (_, alone) = Self.resolve(file: "\nretry_max = 1s\n")
        #expect(alone.map(\.description) == ["\(Self.path):2: retry_max: is shorter than retry_min, which is 5s by default"])
    }

    /// `1e300d` parses as a number of days, but no timer can be armed that far off: taken
    /// up (at start or by a reload), it stopped notifyd at its next wait or request.
    @Test func aDurationLongerThanAHundredYearsIsRefused() {
        for key in ["refresh_interval", "retry_min", "retry_max", "request_timeout", "outbox_expiry", "keep_alive"] {
            let (_, problems) = Self.resolve(file: "retry_min = 1s\n\(key) = 1e300d\n")
            #expect(problems.map(\.description) == ["\(Self.path):2: \(key): must be at most 36500d (100 years)"])
        }
        let (settings, problems) = Self.resolve(file: "refresh_interval = 36500d\noutbox_expiry = 36500d\nkeep_alive = 36500d\n")
        #expect(problems.isEmpty, "\(problems)")
        #expect(settings.runtime.policy.refreshInterval == 36500 * 86400)
        #expect(settings.runtime.keepAlive == 36500 * 86400)
    }

    @Test func thePasswordSourceFollowsTheSettings() throws {
        let directory = "/tmp/nd-cred-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(PasswordSource.detect(command: nil, environment: [:]) == .stored)
        #expect(PasswordSource.detect(command: "pass show x", environment: ["CREDENTIALS_DIRECTORY": directory]) == .command("pass show x"))
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: directory + "/notifyd-password"))
        #expect(PasswordSource.detect(command: "pass show x", environment: ["CREDENTIALS_DIRECTORY": directory]) == .systemdCredential(path: directory + "/notifyd-password"))
    }
}
