import Foundation
import NotifyTestSupport
import Testing

/// Two builds of one version are told apart: `notifyctl ping` names the build of the
/// notifyd that answers (the package's version, or the git commit it was built from), and
/// both programs' `--version` name their own.
@Suite struct BuildNameTests {
    /// The commit this checkout is at, as the build was told it; nil outside git.
    static func head() async throws -> String? {
        let git = try await runCaptured("/usr/bin/env", ["git", "-C", Contrib.repository.path, "rev-parse", "--short=12", "HEAD"])
        return git.status == 0 ? git.output.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }

    @Test func pingNamesTheBuildThatAnswers() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let ping = try await daemon.notifyctl(["ping"])
        #expect(ping.status == 0, "\(ping.error)")
        let said = try #require(ping.output.wholeMatch(of: /notifyd 0\.1\.0 \(([^)]+)\), protocol 1, pid (\d+)\n/), "\(ping.output)")
        let build = String(said.output.1)
        #expect(Int32(said.output.2) == daemon.child.pid)
        if let head = try await Self.head(), ProcessInfo.processInfo.environment["NOTIFYD_BUILD"] == nil {
            #expect(build.hasPrefix("git \(head)"), "built from \(head): \(build)")
        }
        let json = try await daemon.notifyctl(["--json", "ping"])
        #expect(json.output.contains("\"build\":\"\(build)\""), "\(json.output)")
        for program in ["notifyd", "notifyctl"] {
            let version = try await runCaptured(BuiltProducts.path(program), ["--version"])
            #expect(version.output == "\(program) 0.1.0 (\(build)), protocol 1\n", "\(version.output)")
        }
        await daemon.cleanUp()
    }
}
