import Foundation
import DevBackend
import Testing

@Suite struct LaunchArgumentsTests {
    /// Android under fcmv1, as notifyd's defaults send it: the README's first hour works
    /// for an Android token without a flag on either side.
    @Test func defaultsServeOnAnEphemeralLoopbackPortKnowAndroidAsFCMv1AndLogRequests() throws {
        #expect(try DevBackend.parseArguments([]) == .run(DevBackend.Options(androidPlatformName: .fcmv1, logRequests: true)))
        #expect(try DevBackend.parseArguments(["--android-name", "fcm"]) == .run(DevBackend.Options(androidPlatformName: .fcm, logRequests: true)))
    }

    @Test func everyFlagIsApplied() throws {
        let command = try DevBackend.parseArguments([
            "--host", "127.0.0.2", "--port=8080", "--android-name", "gcm",
            "--gone-status", "410", "--escapes-text", "--quiet",
        ])
        #expect(command == .run(DevBackend.Options(
            host: "127.0.0.2", port: 8080, androidPlatformName: .gcm, goneStatus: 410,
            escapesText: true, quiet: true, logRequests: false
        )))
        #expect(try DevBackend.parseArguments(["--port", "1", "--help"]) == .help)
        #expect(try DevBackend.parseArguments(["--version"]) == .version)
    }

    @Test func accountsComeFromAFileNeverTheCommandLine() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("alice:s3cret:with:colons\nbob:b\n".utf8).write(to: URL(fileURLWithPath: path))
        guard case .run(let options) = try DevBackend.parseArguments(["--accounts", path]) else {
            Issue.record("not a run")
            return
        }
        #expect(options.accounts == ["alice": "s3cret:with:colons", "bob": "b"])
        try Data("no colon here\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(["--accounts", path]) }
        #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(["--accounts", path + ".missing"]) }
    }

    @Test func theInstallationsDialectTakesItsKeyFromTheCommandLineOrAFile() throws {
        #expect(try DevBackend.parseArguments(["--api", "installations", "--api-key=k1", "--installations-android-name", "fcm"])
            == .run(DevBackend.Options(androidPlatformName: .fcmv1, logRequests: true, api: .installations, apiKey: "k1", installationsAndroidName: .fcm)))
        #expect(try DevBackend.parseArguments(["--api=registrations"]) == .run(DevBackend.Options(androidPlatformName: .fcmv1, logRequests: true)))

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apikey-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for contents in ["from-file\r\nignored\n", "from-file\n", "from-file"] {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
            guard case .run(let options) = try DevBackend.parseArguments(["--api-key-file", path, "--api", "installations"]) else {
                Issue.record("not a run")
                return
            }
            #expect(options.apiKey == "from-file")
            #expect(options.api == .installations)
        }
        try Data("\nkey on the second line\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(["--api-key-file", path]) }
        #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(["--api-key-file", path + ".missing"]) }
    }

    @Test func installationsWithoutAKeyIsAUsageErrorNamingBothFlags() {
        let error = #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(["--api", "installations"]) }
        #expect(error?.message.contains("--api-key ") == true)
        #expect(error?.message.contains("--api-key-file") == true)
    }

    @Test(arguments: [
        ["--api-key", "SECRET-KEY", "--api", "bogus"], ["--api-keys=SECRET-KEY"], ["--api-key=SECRET-KEY", "--port", "x"],
        ["--api-key", "SECRET-KEY", "--api", "installations", "--quiet=SECRET-KEY"],
    ])
    func noUsageErrorRepeatsTheKey(arguments: [String]) {
        let error = #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(arguments) }
        #expect(error?.message.contains("SECRET-KEY") == false)
    }

    @Test(arguments: [
        ["--port"], ["--port", "70000"], ["--port", "x"], ["--android-name", "apns"],
        ["--gone-status", "200"], ["--host", "localhost"], ["--quiet=yes"], ["--verbose"], ["serve"],
        ["--api", "installation"], ["--api"], ["--api-key", ""], ["--api-key", "  "], ["--installations-android-name", "gcm"],
    ])
    func mistakesAreUsageErrors(arguments: [String]) {
        #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(arguments) }
    }
}
