import Foundation
import NotifyTestSupport
import Testing

/// Two builds of one version are told apart: `notifyctl ping` names the build of the
/// notifyd that answers (the package's version, or the git commit it was built from), and
/// both programs' `--version` name their own. That the release build names the commit it
/// was built from is contrib/tests/release-build's to check.
@Suite struct BuildNameTests {
    @Test func pingNamesTheBuildThatAnswers() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let ping = try await daemon.notifyctl(["ping"])
        #expect(ping.status == 0, "\(ping.error)")
        // The build these binaries were told of ($NOTIFYD_BUILD when they were built; a
        // plain `swift build` is told none), as the running notifyd's --version says it.
        let version = try await runCaptured(BuiltProducts.path("notifyd"), ["--version"])
        let told = try #require(version.output.wholeMatch(of: /notifyd 0\.1\.0 \(protocol 1(?:; build ([^)]+))?\)\n/), "\(version.output)")
        let build = told.output.1.map { "; build \($0)" } ?? ""
        #expect(ping.output == "notifyd 0.1.0 (protocol 1\(build)), pid \(daemon.child.pid)\n", "\(ping.output)")
        let json = try await daemon.notifyctl(["--json", "ping"])
        #expect(json.output.contains("\"build\":") == (told.output.1 != nil), "\(json.output)")
        let client = try await runCaptured(BuiltProducts.path("notifyctl"), ["--version"])
        #expect(client.output == "notifyctl 0.1.0 (protocol 1\(build))\n", "\(client.output)")
        // Scripts read the version as the second word (build-deb.sh, the Debian package's check).
        #expect(version.output.split(separator: " ")[1] == "0.1.0", "\(version.output)")
        await daemon.cleanUp()
    }
}
