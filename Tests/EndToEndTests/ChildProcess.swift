import Foundation
import Synchronization

/// A program run by a test: its output collected, and always stopped by the test.
final class ChildProcess: Sendable {
    let process: Process
    private let output = OutputBuffer()
    private let errors = OutputBuffer()

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        // A developer's own daemon must never be reached by a test.
        merged["NOTIFYD_SOCKET"] = nil
        merged["XDG_RUNTIME_DIR"] = nil
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let inPipe = Pipe()
        process.standardInput = inPipe
        self.process = process
        outPipe.fileHandleForReading.readabilityHandler = { [output] handle in
            output.append(handle.availableData)
        }
        errPipe.fileHandleForReading.readabilityHandler = { [errors] handle in
            errors.append(handle.availableData)
        }
        try process.run()
        if let stdin { inPipe.fileHandleForWriting.write(stdin) }
        try? inPipe.fileHandleForWriting.close()
    }

    var standardOutput: String { output.text }
    var standardError: String { errors.text }

    /// Waits for the exit (up to `seconds`, then kills) and returns the status.
    @discardableResult
    func wait(seconds: Double = 30) async -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        // Let the pipe handlers drain what the child wrote last.
        try? await Task.sleep(for: .milliseconds(20))
        return process.terminationStatus
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }
}

/// Runs a program to completion: status, stdout, stderr.
func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil, seconds: Double = 30) async throws -> (status: Int32, output: String, error: String) {
    let child = try ChildProcess(executable, arguments, environment: environment, stdin: stdin)
    let status = await child.wait(seconds: seconds)
    return (status, child.standardOutput, child.standardError)
}

/// Polls `condition` until it holds or `seconds` pass.
func eventually(_ seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// Bytes a child wrote, collected from the pipe's handler thread.
final class OutputBuffer: Sendable {
    private let data = Mutex(Data())
    func append(_ bytes: Data) { data.withLock { $0.append(bytes) } }
    var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
}
