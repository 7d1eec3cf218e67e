import DevBackend
import Foundation
import NotifyProtocol
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// The request URL kept per lane is rebuilt whenever anything it is built from differs,
/// byte for byte: two recipients whose names are canonically equivalent (`==` for Swift
/// strings) are still two tags.
@Suite struct RequestTargetCacheTests {
    static let password = "pw-\(UUID().uuidString.prefix(8))"

    @Test func canonicallyEquivalentRecipientsAreTwoTargets() async throws {
        let server = DevBackendServer(options: .init(quiet: true, accounts: ["alice": Self.password]))
        try server.start()
        let backend = HTTPBackend(settings: SettingsStore(.init(requestTimeout: 10)))
        let account = BackendAccount(baseURL: server.baseURL, user: "alice", password: Self.password)
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        _ = await backend.sendNotification(pns: "apns", toTag: composed, body: "one", account: account, idempotencyKey: nil)
        _ = await backend.sendNotification(pns: "apns", toTag: decomposed, body: "two", account: account, idempotencyKey: nil)
        let tags = server.pushes().map { $0.toTag.unicodeScalars.map(\.value) }
        _ = try? await offThePool { server.stop() }
        #expect(tags == [composed.unicodeScalars.map(\.value), decomposed.unicodeScalars.map(\.value)])
    }
}
