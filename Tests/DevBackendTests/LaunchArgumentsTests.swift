import DevBackend
import Testing

@Suite struct LaunchArgumentsTests {
    @Test func defaultsServeOnAnEphemeralLoopbackPortAndLogRequests() throws {
        #expect(try DevBackend.parseArguments([]) == .run(DevBackend.Options(logRequests: true)))
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

    @Test(arguments: [
        ["--port"], ["--port", "70000"], ["--port", "x"], ["--android-name", "apns"],
        ["--gone-status", "200"], ["--host", "localhost"], ["--quiet=yes"], ["--verbose"], ["serve"],
    ])
    func mistakesAreUsageErrors(arguments: [String]) {
        #expect(throws: DevBackend.UsageError.self) { try DevBackend.parseArguments(arguments) }
    }
}
