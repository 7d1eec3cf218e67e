import NotifyProtocol
import Testing
@testable import NotifyCore

/// Core errors map to stable wire codes, with a message a person can act on.
struct CoreErrorTests {
    @Test(arguments: [
        (CoreError.invalidArgument("bad"), ErrorCode.invalidArgument),
        (.notLoggedIn, .notLoggedIn),
        (.noBackend, .noBackend),
        (.noToken, .noToken),
        (.unauthorized(user: "bob", status: 403), .unauthorized),
        (.backendUnavailable("connection refused"), .backendUnavailable),
        (.backendRejected(status: 400, detail: "x"), .backendRejected),
        (.unknownPlatform(RefusedPlatform(backend: "https://b.example", platform: .fcmv1, detail: "")), .unsupportedPlatform),
        (.storage("disk full"), .internalError),
        (.shuttingDown, .shuttingDown),
    ])
    func mapsToItsWireCode(error: CoreError, code: ErrorCode) {
        #expect(error.wireError.code == code)
        #expect(error.wireError.message == error.description)
    }

    @Test func messagesSayWhatToDo() {
        #expect(CoreError.invalidArgument("tag 'a b' contains a space").description == "tag 'a b' contains a space")
        #expect(CoreError.notLoggedIn.description.contains("notifyctl login"))
        #expect(CoreError.noToken.description.contains("notifyctl set-token"))
        #expect(CoreError.unauthorized(user: "bob", status: 403).description
            == "the backend refused the credentials of 'bob' (HTTP 403): run `notifyctl login bob` again")
        // The detail says whether the backend answered: its own words, no prefix.
        #expect(CoreError.backendUnavailable(BackendFailure.unreachableText("connection refused")).description
            == "the backend could not be reached: connection refused")
        #expect(CoreError.backendUnavailable("the backend asked to slow down (HTTP 429)").description == "the backend asked to slow down (HTTP 429)")
    }

    /// Why the send is not retried, from what notifyd knows, and what to set.
    @Test func anUnknownPlatformSaysHowItIsKnownAndWhatToSet() {
        let text = CoreError.unknownPlatform(RefusedPlatform(backend: "https://b.example", platform: .fcm, detail: "Unsupported platform")).description
        #expect(text == "the backend answered HTTP 500 and does not know Android under the name 'fcm'"
            + " (it refused a registration under that name: HTTP 400: Unsupported platform), so the message is not retried: a backend updated for FCM v1"
            + " knows it as fcmv1 (the oldest tutorial, as gcm): set `android_name = fcmv1` (the default) in notifyd's config file"
            + " (`notifyd --check-config` names it), then run `notifyctl reload`")
    }

    @Test func rejectedDetailIsAppendedOnlyWhenPresent() {
        #expect(CoreError.backendRejected(status: 400, detail: "").description == "the backend refused the request (HTTP 400)")
        #expect(CoreError.backendRejected(status: 400, detail: "bad tag").description == "the backend refused the request (HTTP 400): bad tag")
    }
}
