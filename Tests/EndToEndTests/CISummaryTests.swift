import Foundation
import Testing

/// `.ci/test-summary`, the line that ends `.ci/run`: "Tests: N passed, N failed".
@Suite struct CISummaryTests {
    static func summary(of log: String, status: Int32) async throws -> String {
        let scratch = try ContribScratch("ci")
        defer { scratch.remove() }
        let file = try scratch.write("swift-test.log", log)
        let result = try await runCaptured(Contrib.repository.appendingPathComponent(".ci/test-summary").path, [file, String(status)])
        #expect(result.status == 0, "\(result.error)")
        return result.output
    }

    @Test func countsPassedFailedAndSkippedTests() async throws {
        let log = """
            ◇ Test run started.
            ✔ Test one() passed after 0.1 seconds.
            ✘ Test two() recorded an issue at X.swift:3:5: Expectation failed
            ✘ Test two() failed after 0.2 seconds with 1 issue.
            ✘ Test three(x:) with 2 test cases failed after 0.2 seconds with 2 issues.
            ➜ Test four() skipped: "needs zsh (Debian package zsh)"
            ✔ Test five(x:) with 3 test cases passed after 0.1 seconds.
            ✘ Suite S failed after 0.3 seconds with 3 issues.
            ✘ Test run with 5 tests in 1 suite failed after 0.3 seconds with 3 issues.

            """
        let output = try await Self.summary(of: log, status: 1)
        // The failed tests by name, then their issues: the end of a long log says which and why.
        // Not as "<symbol> Test …": a log that quotes this output must not count them again.
        #expect(output == """
            Failed: two() failed after 0.2 seconds with 1 issue.
            Failed: three(x:) with 2 test cases failed after 0.2 seconds with 2 issues.
            Issue: two() recorded an issue at X.swift:3:5: Expectation failed
            Skipped: 1
            Tests: 2 passed, 2 failed

            """)
    }

    /// The test command a newcomer copies from the README is the one CI runs, its output
    /// ends with Swift Testing's count (no empty XCTest run after it), and the README
    /// quotes no count that the next test would make stale.
    @Test func theReadmesTestCommandIsCIsAndQuotesNoCount() throws {
        let readme = try String(contentsOf: Contrib.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let run = try String(contentsOf: Contrib.repository.appendingPathComponent(".ci/run"), encoding: .utf8)
        let command = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=24 swift test --disable-xctest"
        let readmeRunsIt = readme.contains("\n" + command + " ")
        let ciRunsIt = run.contains("\n" + command + " 2>&1")
        #expect(readmeRunsIt, "README's test command is `\(command)`")
        #expect(ciRunsIt, ".ci/run runs `\(command)`")
        let counts = readme.matches(of: /Tests: \d+ passed|\b\d{3,} tests\b/).map { String(readme[$0.range]) }
        #expect(counts.isEmpty, "a test count in the README goes stale")
    }

    @Test func aFailureOutsideAnyTestIsCounted() async throws {
        #expect(try await Self.summary(of: "error: compile command failed\n", status: 1) == "Tests: 0 passed, 1 failed\n")
        #expect(try await Self.summary(of: "✔ Test run with 3 tests in 2 suites passed after 1 seconds.\n", status: 0) == "Tests: 3 passed, 0 failed\n")
    }
}
