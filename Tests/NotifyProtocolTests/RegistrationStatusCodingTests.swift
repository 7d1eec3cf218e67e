import Foundation
import NotifyProtocol
import Testing

/// `RegistrationStatus` on the wire: snake_case keys, ISO 8601 dates, open set of states.
struct RegistrationStatusCodingTests {
    private func sample() throws -> RegistrationStatus {
        RegistrationStatus(
            state: .retrying, id: "8499338226434223-1", message: "HTTP 503; retrying",
            registeredAt: try WireText.date("2026-01-02T03:04:05Z"),
            lastAttemptAt: try WireText.date("2026-01-03T00:00:00Z"),
            nextAttemptAt: try WireText.date("2026-01-03T00:05:00Z"),
            failures: 2,
            registered: RegisteredTarget(handle: "ABCD", platform: .apns, tags: ["news"], user: "bob", backend: "https://b.example"))
    }

    @Test func encodesSnakeCaseKeysAndISODates() throws {
        let text = try WireText.encode(try sample())
        #expect(text == #"{"failures":2,"id":"8499338226434223-1","last_attempt_at":"2026-01-03T00:00:00Z","message":"HTTP 503; retrying","next_attempt_at":"2026-01-03T00:05:00Z","registered":{"backend":"https://b.example","handle":"ABCD","platform":"apns","tags":["news"],"user":"bob"},"registered_at":"2026-01-02T03:04:05Z","state":"retrying"}"#)
        #expect(!text.contains("registeredAt"))
        #expect(!text.contains("nextAttemptAt"))
        #expect(!text.contains("lastAttemptAt"))
    }

    @Test func roundTrips() throws {
        let original = try sample()
        let decoded = try WireText.decode(RegistrationStatus.self, try WireText.encode(original))
        #expect(decoded == original)
    }

    @Test func absentValuesAreLeftOut() throws {
        let text = try WireText.encode(RegistrationStatus(state: .noToken))
        #expect(text == #"{"failures":0,"state":"no_token"}"#)
    }

    @Test func unknownStateAndExtraFieldsDecode() throws {
        let text = #"{"state":"paused_by_admin","failures":0,"registered_at":"2026-05-06T07:08:09Z","paused_until":"later"}"#
        let decoded = try WireText.decode(RegistrationStatus.self, text)
        #expect(decoded.state == RegistrationState("paused_by_admin"))
        #expect(decoded.state.description == "paused_by_admin")
        #expect(decoded.state != .registered)
        #expect(decoded.registeredAt == (try WireText.date("2026-05-06T07:08:09Z")))
        #expect(decoded.nextAttemptAt == nil)
        // An unknown state is written back as it came.
        #expect(try WireText.parse(try WireText.encode(decoded))["state"] == .string("paused_by_admin"))
    }

    @Test func camelCaseDateKeysAreNotRead() throws {
        let decoded = try WireText.decode(RegistrationStatus.self, #"{"state":"registered","failures":1,"registeredAt":"2026-05-06T07:08:09Z"}"#)
        #expect(decoded.registeredAt == nil)
        #expect(decoded.failures == 1)
    }

    @Test(arguments: [
        (RegistrationState.notLoggedIn, "not_logged_in"),
        (.noBackend, "no_backend"),
        (.noToken, "no_token"),
        (.unregistered, "unregistered"),
        (.registering, "registering"),
        (.registered, "registered"),
        (.retrying, "retrying"),
        (.unauthorized, "unauthorized"),
        (.rejected, "rejected"),
    ])
    func knownStatesOnTheWire(state: RegistrationState, wire: String) throws {
        #expect(try WireText.encode(state) == "\"\(wire)\"")
        #expect(try WireText.decode(RegistrationState.self, "\"\(wire)\"") == state)
    }

    @Test func eventCarriesItsNameAndTime() throws {
        let event = RegistrationEvent(time: try WireText.date("2026-01-01T00:00:00Z"), registration: RegistrationStatus(state: .registered, failures: 0))
        #expect(try WireText.encode(event) == #"{"event":"registration","registration":{"failures":0,"state":"registered"},"time":"2026-01-01T00:00:00Z"}"#)
    }
}
