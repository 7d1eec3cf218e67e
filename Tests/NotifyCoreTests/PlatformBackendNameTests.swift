import NotifyProtocol
import Testing
@testable import NotifyCore

/// The `pns` names sent to the backend, and the platform lists `send` accepts.
struct PlatformBackendNameTests {
    /// `--platform` and `--pns` name Android by any of its names; the backend gets one.
    @Test(arguments: Platform.androidNames)
    func androidGoesUnderTheNameTheBackendKnows(android: Platform) {
        for given in Platform.androidNames {
            #expect(given.backendName(android: android) == android.rawValue)
            #expect(given.atBackend(android: android) == android)
        }
    }

    @Test func theBackendKnowsAndroidAsFCMv1UnlessTold() {
        #expect(RuntimeSettings().androidName == .fcmv1)
        #expect(Platform.fcm.backendName(android: RuntimeSettings().androidName) == "fcmv1")
    }

    @Test(arguments: Platform.androidNames)
    func applesAndWindowsNamesNeverChange(android: Platform) {
        #expect(Platform.apns.backendName(android: android) == "apns")
        #expect(Platform.wns.backendName(android: android) == "wns")
        #expect(Platform.apns.atBackend(android: android) == .apns)
    }

    @Test func listKeepsTheOrderGiven() throws {
        #expect(try Platform.list(["wns", "apns", "fcm"]) == [.wns, .apns, .fcm])
        #expect(try Platform.list(["fcmv1", "apns"]) == [.fcmv1, .apns])
        #expect(try Platform.list(["apns"]) == [.apns])
    }

    @Test func listDropsRepeats() throws {
        #expect(try Platform.list(["wns", "apns", "wns", "apns"]) == [.wns, .apns])
    }

    @Test func listIgnoresCase() throws {
        #expect(try Platform.list(["APNS", "Wns", "fCm"]) == [.apns, .wns, .fcm])
        #expect(try Platform.list(["apns", "APNS", "Apns"]) == [.apns])
    }

    @Test func listIgnoresSurroundingSpaces() throws {
        #expect(try Platform.list([" apns", "wns "]) == [.apns, .wns])
    }

    @Test(arguments: ["blackberry", "ios", "apns2", "", "mpns"])
    func anUnknownNameIsRefusedByName(name: String) {
        let error = #expect(throws: CoreError.self) {
            try Platform.list(["apns", name])
        }
        let text = invalidArgumentText(error)
        #expect(text?.contains("'\(name)'") == true, "\(String(describing: error))")
        // It says what would have been accepted.
        #expect(text?.contains("apns, fcm, fcmv1, gcm, wns") == true, "\(String(describing: error))")
    }

    @Test func anEmptyListIsRefused() {
        let error = #expect(throws: CoreError.self) {
            try Platform.list([])
        }
        #expect(invalidArgumentText(error) != nil, "\(String(describing: error))")
    }
}
