import Foundation
import NotifyTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `notify-devbackend` serving the installations dialect: its key taken from a
/// file, and never printed.
@Suite struct InstallationsExecutableTests {
    @Test func printsOneLinePerRequestAndAcceptedNotificationButNeverTheKey() async throws {
        let key = "s3cret-\(UUID().uuidString)"
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("apikey-\(UUID().uuidString)").path
        try Data((key + "\r\nsecond line\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        defer { try? FileManager.default.removeItem(atPath: keyFile) }

        let backend = try await SpawnedProcess.start(
            try ExecutableTests.executable().path, ["--port", "0", "--api", "installations", "--api-key-file", keyFile]
        )
        defer { backend.signal(SIGKILL) }
        let first = try #require(await backend.outputLines(atLeast: 1).first)
        let prefix = "notify-devbackend listening on http://127.0.0.1:"
        #expect(first.hasPrefix(prefix))
        let port = try #require(Int(first.dropFirst(prefix.count)))

        let client = try RawHTTPClient(port: port)
        let installation = #"{"installationId":"phone","platform":"apns","pushChannel":"AB","tags":["username:bob"]}"#
        try client.send(
            "PUT /api/notifications/installations HTTP/1.1\r\nHost: x\r\napikey: \(key)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(installation.utf8.count)\r\n\r\n\(installation)"
        )
        #expect(try client.readResponse().status == 200)
        #expect(await backend.outputLines(atLeast: 2).dropFirst() == ["PUT /api/notifications/installations 200 user=-"])

        let notification = #"{"text":"hi","action":"open","tags":["username:bob"]}"#
        try client.send(
            "POST /api/notifications/requests?apikey=\(key) HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(notification.utf8.count)\r\n\r\n\(notification)"
        )
        #expect(try client.readResponse().status == 200)
        #expect(await backend.outputLines(atLeast: 4).dropFirst(2) == [
            #"request #1 to username:bob (1 device): fcmv1 { "message" : { "notification" : { "title" : "PushDemo", "body" : "hi"}, "data" : { "action" : "open" } } } apns { "aps" : {"alert" : "hi"}, "action" : "open" }"#,
            "POST /api/notifications/requests 200 user=-",
        ])

        try client.send("DELETE /api/notifications/installations/phone HTTP/1.1\r\nHost: x\r\napikey: wrong-\(key)\r\n\r\n")
        #expect(try client.readResponse().status == 401)
        try client.send("GET /_dev/state HTTP/1.1\r\nHost: x\r\n\r\n")
        let state = try client.readResponse()
        #expect(state.status == 200)
        #expect(!state.text.contains(key))
        #expect(await backend.outputLines(atLeast: 5).count == 5)

        backend.signal(SIGTERM)
        #expect(await backend.wait(seconds: 10) == 0)
        #expect(!backend.standardOutput.contains(key))
        #expect(!backend.standardError.contains(key))
        #expect(backend.standardOutput.contains("DELETE /api/notifications/installations/phone 401 user=-"))
    }

    @Test func installationsWithoutAKeyIsAUsageErrorNamingBothFlags() async throws {
        let result = try await run(try ExecutableTests.executable().path, ["--api", "installations"], seconds: 10)
        #expect(result.status == 2)
        #expect(result.error.contains("--api-key "))
        #expect(result.error.contains("--api-key-file"))
    }
}
