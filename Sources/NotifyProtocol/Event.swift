#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A line pushed to connections that asked with `watch`: `{"event": "registration", ...}`.
public enum EventName {
    public static let registration = "registration"
}

public struct RegistrationEvent: Codable, Hashable, Sendable {
    public var event: String = EventName.registration
    public var time: Date
    public var registration: RegistrationStatus

    public init(time: Date, registration: RegistrationStatus) {
        self.time = time
        self.registration = registration
    }
}
