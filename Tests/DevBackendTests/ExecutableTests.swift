import Foundation
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

    @Test func printsItsAddressFirstThenOneLinePerRequestAndPushAndExitsCleanlyOnSIGTERM() throws {
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let lines = PipeLines(output.fileHandleForReading.fileDescriptor)

        let first = try lines.next()
        let prefix = "notify-devbackend listening on http://127.0.0.1:"
        #expect(first.hasPrefix(prefix))
        let port = try #require(Int(first.dropFirst(prefix.count)))

        let client = try RawHTTPClient(port: port)
        let secret = Data("alice:alice".utf8).base64EncodedString()
        try client.send("POST /api/register HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(secret)\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(try lines.next() == "POST /api/register 200 user=alice")

        let body = #""hi""#
        try client.send(
            "POST /api/notifications?pns=apns&to_tag=bob HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(secret)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        #expect(try client.readResponse().status == 200)
        #expect(try lines.next() == #"push #1 apns from alice to bob (0 devices): {"aps":{"alert":"From alice: hi"}}"#)
        #expect(try lines.next() == "POST /api/notifications 200 user=alice")

        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    @Test func aBadFlagIsAUsageErrorOnStandardError() throws {
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["--gone-status", "200"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
        #expect(message.contains("--gone-status"))
    }
}

/// Lines from a child's stdout, each waited for with a generous bound so a broken
/// executable fails the test instead of hanging it.
final class PipeLines {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(_ fd: Int32) {
        self.fd = fd
    }

    func next() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 10_000) > 0 else {
                throw RawHTTPClient.Failure(description: "no output line from notify-devbackend")
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { throw RawHTTPClient.Failure(description: "notify-devbackend closed its output") }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}
