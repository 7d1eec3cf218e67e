import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd and notifyctl, with Android devices, at the tutorial backend as
/// written (which knows Android as `fcm`) and as updated for FCM v1.
@Suite struct AndroidCommandLineTests {
    static let token = "dQw4w9WgXcQ:APA91bH-x_yZ0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ3"

    enum Variant: String, CaseIterable, Sendable {
        case asWritten, updatedForFCMv1

        var androidName: String { self == .asWritten ? "fcm" : "fcmv1" }
        var refusedName: String { self == .asWritten ? "fcmv1" : "fcm" }

        func backend(port: Int = 0) throws -> DevBackendServer {
            let server = DevBackendServer(options: .init(port: port, androidPlatformName: self == .asWritten ? .fcm : .fcmv1, quiet: true))
            try server.start()
            return server
        }
    }

    /// notifyd at `backend`, told `androidName` (none: its default), logged in as alice
    /// unless `stateDirectory` holds a login already.
    static func daemon(at backend: DevBackendServer, androidName: String?, stateDirectory: String? = nil) async throws -> DaemonUnderTest {
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: stateDirectory,
                                               environment: androidName.map { ["NOTIFYD_ANDROID_NAME": $0] } ?? [:])
        if stateDirectory == nil { try await daemon.logIn("alice") }
        return daemon
    }

    @Test(arguments: Variant.allCases)
    func androidRegistersUnderTheNameTheBackendKnowsAndALegacyOneIsWarnedOf(variant: Variant) async throws {
        let backend = try variant.backend()
        defer { backend.stop() }
        let daemon = try await Self.daemon(at: backend, androidName: variant.androidName)
        let set = try await daemon.notifyctl(["set-token", "--platform", "fcm", Self.token])
        #expect(set.status == 0, "\(set.output)\(set.error)")
        #expect(set.output.contains("registered"), "\(set.output)")
        #expect(backend.registrations().map(\.platform) == [variant.androidName])
        #expect(backend.registrations().map(\.handle) == [Self.token])
        let status = try await daemon.notifyctl(["status"])
        #expect(status.status == 0)
        let legacy = variant == .asWritten
        #expect(set.error.contains("warning: registered under the legacy name 'fcm'") == legacy, "\(set.error)")
        #expect(status.output.contains("Google no longer delivers there") == legacy, "\(status.output)")
        #expect(status.output.contains("platform:     fcm" + (legacy ? "\n" : " (registered as fcmv1, android_name)\n")), "\(status.output)")
        await daemon.cleanUp()
    }

    /// A notifyd from before FCM v1 registered the device under fcm; the backend was then
    /// updated (at the same URL, in front of the same hub). The upgraded notifyd moves the
    /// registration to fcmv1 by itself, with one request and the same token.
    @Test func anUpgradeMovesAnFCMRegistrationToFCMv1Once() async throws {
        let before = try Variant.asWritten.backend()
        let old = try await Self.daemon(at: before, androidName: "fcm")
        #expect(try await old.notifyctl(["set-token", "--platform", "fcm", Self.token]).status == 0)
        #expect(await old.stop() == 0)

        let port = before.port
        let updated = DevBackendServer(options: .init(port: port, androidPlatformName: .fcmv1, quiet: true), sameHubAs: before)
        try await offThePool { before.stop() }
        // The port is busy for as long as a child spawned meanwhile holds a copy of the old
        // listener (until it runs its program): taken over once free, as HeldPort does.
        try await HeldPort.hold(port).release()
        try updated.start()
        defer { updated.stop() }
        let new = try await Self.daemon(at: updated, androidName: nil, stateDirectory: old.stateDirectory)
        #expect(await eventually { updated.registrations().first?.platform == "fcmv1" })
        #expect(await eventually { (try? await new.notifyctl(["status"]).status) == 0 })
        let status = try await new.notifyctl(["status", "--json"])
        #expect(status.output.contains(#""platform":"fcmv1""#), "\(status.output)")
        #expect(updated.registrations().map(\.handle) == [Self.token])
        #expect(updated.requestCount(route: .upsert) == 1 && updated.requestCount(route: .create) == 0, "\(updated.requests().map(\.path))")
        #expect(!(try await new.notifyctl(["status"]).output.contains("legacy")))
        await new.cleanUp()
        await old.cleanUp()
    }

    /// A refused name names itself and its fix, in set-token and status; the send under it
    /// then ends `send --wait` with that reason, one request each, and nothing is left to retry.
    @Test(arguments: Variant.allCases)
    func aRefusedNameIsSaidOnceAndItsSendEndsWithTheReason(variant: Variant) async throws {
        let backend = try variant.backend()
        defer { backend.stop() }
        let daemon = try await Self.daemon(at: backend, androidName: variant.refusedName)
        let set = try await daemon.notifyctl(["set-token", "--platform", "gcm", Self.token])
        #expect(set.status == 1, "\(set.output)\(set.error)")
        #expect(set.error.contains("'\(variant.refusedName)'") && set.error.contains("`android_name = \(variant.androidName)`"), "\(set.error)")
        let status = try await daemon.notifyctl(["status"])
        #expect(status.status == 1)
        #expect(!status.output.contains("next attempt"), "nothing is retried: \(status.output)")

        let sent = try await daemon.notifyctl(["send", "--to", "bob", "--pns", "fcm", "--wait", "hi"])
        #expect(sent.status == 1, "\(sent.output)\(sent.error)")
        #expect(sent.error.contains("does not know Android under the name '\(variant.refusedName)'"), "\(sent.error)")
        #expect(sent.error.contains("not retried") && sent.error.contains("`android_name = \(variant.androidName)`"), "\(sent.error)")
        #expect(try await daemon.notifyctl(["outbox"]).output.contains("The outbox is empty."))
        // A later request proves none was made in between.
        #expect(try await daemon.notifyctl(["send", "--to", "bob", "--pns", "apns", "--wait", "later"]).status == 0)
        #expect(backend.requestCount(route: .upsert) == 1, "one registration attempt")
        #expect(backend.requestCount(route: .send) == 2, "one attempt of the refused send, then the later one")
        await daemon.cleanUp()
    }

    static let hostileTexts = [
        #"she said "hi""#, #"C:\path\to\"#, "two\nlines", "1 < 2 & 3 > 2", "<b>&amp;</b>", "🍷 👩‍👩‍👧",
        #"all: "\ < & > ' 🍷"# + "\n\t", #""}}, {"aps":\u0041"#,
    ]

    @Test(arguments: Variant.allCases)
    func hostileTextArrivesAsTypedUnderAnyAndroidName(variant: Variant) async throws {
        let backend = try variant.backend()
        defer { backend.stop() }
        let daemon = try await Self.daemon(at: backend, androidName: variant.androidName)
        for (index, text) in Self.hostileTexts.enumerated() {
            let name = ["fcmv1", "fcm", "gcm"][index % 3]
            let sent = try await daemon.notifyctl(["send", "--to", "bob", "--pns", name, "--wait", "-"], stdin: Data((text + "\n").utf8))
            #expect(sent.status == 0, "\(name) \(text.debugDescription): \(sent.output)\(sent.error)")
        }
        let pushes = backend.pushes()
        #expect(pushes.count == Self.hostileTexts.count)
        for (push, text) in zip(pushes, Self.hostileTexts) {
            #expect(push.pns == variant.androidName)
            #expect(push.valid, "\(push.payload)")
            #expect(push.displayedText == "From alice: " + text)
        }
        await daemon.cleanUp()
    }

    /// FCM v1's wrapper is longer: a text that fits the legacy payload but not FCM v1's is
    /// refused before a request when the backend knows Android as fcmv1.
    @Test func aTextTooLongForFCMv1IsRefusedBeforeSending() async throws {
        let backend = try Variant.updatedForFCMv1.backend()
        defer { backend.stop() }
        let daemon = try await Self.daemon(at: backend, androidName: nil)
        let legacyWrapper = #"{ "data" : {"message":"From alice: "}}"#.utf8.count
        let text = String(repeating: "x", count: 4096 - legacyWrapper)
        let sent = try await daemon.notifyctl(["send", "--to", "bob", "--pns", "fcm", "-"], stdin: Data(text.utf8))
        #expect(sent.status == 1, "\(sent.output)\(sent.error)")
        #expect(sent.error.contains("too long for fcmv1"), "\(sent.error)")
        #expect(backend.requestCount(route: .send) == 0)
        await daemon.cleanUp()
    }
}
