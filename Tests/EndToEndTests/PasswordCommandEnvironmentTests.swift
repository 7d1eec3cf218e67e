import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The password command runs with the environment notifyd was given: what notifyd sets for
/// the libraries it loads (`LibraryEnvironment`) stays in notifyd.
@Suite struct PasswordCommandEnvironmentTests {
    /// What the password command saw of `GNUTLS_NO_IMPLICIT_INIT`, for a notifyd started
    /// with `environment`.
    private func seenByThePasswordCommand(environment: [String: String]) async throws -> String {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let directory = "/tmp/nd-pwenv-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let seen = directory + "/seen"
        let command = #"printf %s "${GNUTLS_NO_IMPLICIT_INIT-unset}" > \#(seen); echo alice"#
        try Data("password_command = \(command)\n".utf8).write(to: URL(fileURLWithPath: directory + "/config"))
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--config", directory + "/config"],
                                               environment: environment)
        let login = try await daemon.notifyctl(["login", "alice"])
        await daemon.cleanUp()
        #expect(login.status == 0, "\(login.output)\(login.error)")
        return try String(contentsOfFile: seen, encoding: .utf8)
    }

    @Test func whatNotifydSetsForItsLibrariesIsNotPassedOn() async throws {
        #expect(try await seenByThePasswordCommand(environment: [:]) == "unset")
    }

    @Test func whatNotifydWasGivenIsPassedOnAsItWas() async throws {
        #expect(try await seenByThePasswordCommand(environment: ["GNUTLS_NO_IMPLICIT_INIT": "0"]) == "0")
    }
}
