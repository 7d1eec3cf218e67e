import Foundation
import NotifyTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `notify-devbackend`, run as other test suites and the README demo run it.
@Suite struct ExecutableTests {
    /// The executable sits next to the test product in the build directory.
    static func executable() throws -> URL {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("notify-devbackend")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw RawHTTPClient.Failure(description: "notify-devbackend not found near \(runner.path)")
    }

    @Test func printsItsAddressFirstThenOneLinePerRequestAndPushAndExitsCleanlyOnSIGTERM() async throws {
        let backend = try await SpawnedProcess.start(try Self.executable().path, ["--port", "0"])
        defer { backend.signal(SIGKILL) }

        let first = try #require(await backend.outputLines(atLeast: 1).first)
        let prefix = "notify-devbackend listening on http://127.0.0.1:"
        #expect(first.hasPrefix(prefix))
        let port = try #require(Int(first.dropFirst(prefix.count)))

        let client = try RawHTTPClient(port: port)
        let secret = Data("alice:alice".utf8).base64EncodedString()
        try client.send("POST /api/register HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(secret)\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(await backend.outputLines(atLeast: 2).dropFirst() == ["POST /api/register 200 user=alice"])

        let body = #""hi""#
        try client.send(
            "POST /api/notifications?pns=apns&to_tag=bob HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(secret)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        #expect(try client.readResponse().status == 200)
        #expect(await backend.outputLines(atLeast: 4).dropFirst(2) == [
            #"push #1 apns from alice to bob (0 devices): {"aps":{"alert":"From alice: hi"}}"#,
            "POST /api/notifications 200 user=alice",
        ])

        backend.signal(SIGTERM)
        #expect(await backend.wait(seconds: 10) == 0, "exits 0, not killed by the signal")
    }

    @Test func aBadFlagIsAUsageErrorOnStandardError() async throws {
        let result = try await run(try Self.executable().path, ["--gone-status", "200"], seconds: 10)
        #expect(result.status == 2)
        #expect(result.error.contains("--gone-status"))
    }
}
