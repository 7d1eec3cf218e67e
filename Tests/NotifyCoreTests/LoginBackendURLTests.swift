import Foundation
import Testing
@testable import NotifyCore

/// `notifyctl login --backend URL` meets the same rules as the configured backend.
struct LoginBackendURLTests {
    private func registrar(_ fixture: RegistrarTests.Fixture, allowInsecureHTTP: Bool) -> Registrar {
        Components(settings: SettingsStore(.init(backend: RegistrarTests.backend, allowInsecureHTTP: allowInsecureHTTP, policy: fixture.policy)),
                   stateDirectory: fixture.directory.path, backend: fixture.backend, clock: fixture.clock, logger: .silent).registrar
    }

    @Test func aPlainHTTPBackendOnAnotherMachineIsRefusedAndNothingIsSaved() async throws {
        let fixture = try RegistrarTests.Fixture()
        let registrar = registrar(fixture, allowInsecureHTTP: false)
        await #expect(throws: CoreError.self) {
            _ = try await registrar.login(user: "alice", password: "alice", backend: "http://backend.invalid")
        }
        #expect(registrar.snapshot().user == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.file("credentials.json")))
        do {
            _ = try await registrar.login(user: "alice", password: "alice", backend: "http://backend.invalid")
        } catch {
            #expect(error.description.contains("use https://"))
        }
    }

    @Test func allowInsecureHTTPAcceptsIt() async throws {
        let fixture = try RegistrarTests.Fixture()
        let registrar = registrar(fixture, allowInsecureHTTP: true)
        _ = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: "http://backend.invalid"), timeout: 30)
        #expect(registrar.snapshot().backend == "http://backend.invalid")
    }

    @Test func credentialsInTheURLAreRefusedAndNotRepeated() async throws {
        let fixture = try RegistrarTests.Fixture()
        let registrar = registrar(fixture, allowInsecureHTTP: true)
        do {
            _ = try await registrar.login(user: "alice", password: "alice", backend: "https://alice:t0ps3cret@backend.example")
            Issue.record("a URL with a password was accepted")
        } catch {
            #expect(!error.description.contains("t0ps3cret"))
        }
    }
}
