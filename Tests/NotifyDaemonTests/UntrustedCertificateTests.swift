import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyClient
import NotifyCore
import NotifyTestSupport
import Testing

/// A backend whose certificate no trusted CA signed (a private CA not yet installed):
/// the error says how to make the system trust it.
@Suite struct UntrustedCertificateTests {
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// `body` with a self-signed server on loopback, which is stopped after it.
    static func withSelfSignedServer<T: Sendable>(_ body: (_ url: String) async throws -> T) async throws -> T {
        let openssl = try #require(Self.openssl)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let server = try await onDedicatedThread { () -> SelfSignedServer in
            try SelfSignedServer(openssl: openssl, directory: directory.path)
        }
        do {
            let result = try await body("https://127.0.0.1:\(server.port)")
            try await onDedicatedThread { server.stop() }
            return result
        } catch {
            try await onDedicatedThread { server.stop() }
            throw error
        }
    }

    @Test(.enabled(if: openssl != nil, "needs the openssl command to serve a self-signed certificate"))
    func anUntrustedCertificateSaysToAddTheCAToTheTrustStore() async throws {
        let backend = HTTPBackend(settings: SettingsStore(.init(requestTimeout: 10)))
        let result = try await Self.withSelfSignedServer { url in
            await backend.createRegistrationId(handle: "AA", account: BackendAccount(baseURL: URL(string: url)!, user: "alice", password: "alice"))
        }
        guard case .failure(.cannotConnect(let reason, tls: true)) = result else {
            Issue.record("expected a TLS failure, got \(result)")
            return
        }
        #expect(reason.contains("not trusted"))
        #expect(reason.contains("update-ca-certificates"))
    }

    /// A backend whose handshake failed is probed with the handshake: its port takes a
    /// connection, but it is not back until its certificate is trusted.
    @Test(.enabled(if: openssl != nil, "needs the openssl command to serve a self-signed certificate"))
    func aTLSProbeFailsWhereTheCertificateIsNotTrustedAndATCPProbeDoesNot() async throws {
        let backend = HTTPBackend(settings: SettingsStore(.init(requestTimeout: 10)))
        let (handshake, connect) = try await Self.withSelfSignedServer { url in
            (await backend.probe(url, tls: true), await backend.probe(url, tls: false))
        }
        #expect(!handshake)
        #expect(connect)
    }
}

/// `openssl s_server` with a fresh self-signed certificate on an ephemeral loopback port.
// Unchecked: created on one thread and stopped on another, never used by two at once.
private final class SelfSignedServer: @unchecked Sendable {
    let server: SpawnedProcess
    let port: Int

    init(openssl: String, directory: String) throws {
        let generate = try SpawnedProcess(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                                                    "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"])
        generate.waitBlocking()

        port = try LoopbackPort.free()
        server = try SpawnedProcess(openssl, ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", directory + "/cert.pem",
                                              "-key", directory + "/key.pem", "-www", "-quiet"])
        let deadline = Date().addingTimeInterval(10)
        while !LoopbackPort.accepts(port) {
            guard Date() < deadline, server.isRunning else {
                stop()
                throw CocoaError(.featureUnsupported)
            }
            usleep(20_000)
        }
    }

    func stop() {
        server.signal(SIGKILL)
        server.waitBlocking()
    }
}
