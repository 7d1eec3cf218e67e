import Foundation
import NotifyDaemon
import Testing

/// A plain-http backend on another machine would carry the password in clear: refused
/// wherever the URL comes from, unless `allow_insecure_http` says otherwise.
@Suite struct InsecureBackendSettingsTests {
    static let remote = "http://backend.invalid:8080"

    private func resolve(file: String? = nil, environment: [String: String] = [:], flags: [SettingValue] = []) -> (ResolvedSettings, [SettingProblem]) {
        SettingsTests.resolve(file: file, environment: SettingsTests.home.merging(environment) { $1 }, flags: flags)
    }

    @Test func plainHTTPToAnotherMachineIsRefusedFromEverySource() {
        let sources: [(ResolvedSettings, [SettingProblem])] = [
            resolve(file: "backend = \(Self.remote)"),
            resolve(environment: ["NOTIFYD_BACKEND": Self.remote]),
            resolve(flags: [SettingValue(key: "backend", value: Self.remote, origin: "--backend")]),
        ]
        for (_, problems) in sources {
            #expect(problems.count == 1)
            #expect(problems.first?.key == "backend")
            #expect(problems.first?.message.contains("use https://") == true)
        }
    }

    @Test func allowInsecureHTTPLetsItThroughFromEverySource() {
        let sources: [(ResolvedSettings, [SettingProblem])] = [
            // After the backend line: the check waits for every value.
            resolve(file: "backend = \(Self.remote)\nallow_insecure_http = true"),
            resolve(environment: ["NOTIFYD_BACKEND": Self.remote, "NOTIFYD_ALLOW_INSECURE_HTTP": "yes"]),
            resolve(flags: [SettingValue(key: "backend", value: Self.remote, origin: "--backend"),
                            SettingValue(key: "allow_insecure_http", value: "true", origin: "--allow-insecure-http")]),
        ]
        for (settings, problems) in sources {
            #expect(problems.isEmpty)
            #expect(settings.runtime.backend == Self.remote)
            #expect(settings.runtime.allowInsecureHTTP)
        }
    }

    @Test func loopbackAndHTTPSNeedNoPermission() {
        for url in ["http://127.0.0.1:5000", "http://localhost", "http://[::1]:80", "https://backend.example"] {
            let (settings, problems) = resolve(file: "backend = \(url)")
            #expect(problems.isEmpty, "\(url)")
            #expect(settings.runtime.backend == url)
        }
    }

    @Test func aURLWithCredentialsIsRefusedWithoutRepeatingThem() {
        let (_, problems) = resolve(flags: [SettingValue(key: "backend", value: "https://bob:pa55word@backend.example", origin: "--backend")])
        #expect(problems.count == 1)
        #expect(!problems.description.contains("pa55word"))
        #expect(!problems.description.contains("bob"))
    }

    @Test func aBadSwitchValueIsNamed() {
        let (_, problems) = resolve(file: "allow_insecure_http = maybe")
        #expect(problems.first?.message == "must be true or false, not 'maybe'")
    }
}
