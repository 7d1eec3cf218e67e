#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

extension Platform {
    /// The platform as the backend knows it: Android under the one name it knows
    /// (`android_name`: `fcmv1` for a backend updated for FCM v1, `fcm` or `gcm` for one
    /// that predates it), the others as they are. The backend builds its payload by it.
    public func atBackend(android: Platform) -> Platform {
        isAndroid ? android : self
    }

    /// The name to send the backend, in a registration's `Platform` and in `pns=`.
    public func backendName(android: Platform) -> String {
        atBackend(android: android).rawValue
    }

    /// Parses `pns` names as given to `send`, in order, without repeats.
    public static func list(_ names: [String]) throws(CoreError) -> [Platform] {
        var platforms: [Platform] = []
        for name in names {
            let trimmed = name.trimmingSpaces().lowercased()
            guard let platform = Platform(rawValue: trimmed) else {
                throw .invalidArgument("unknown platform '\(name)'; use \(Platform.names)")
            }
            if !platforms.contains(platform) { platforms.append(platform) }
        }
        guard !platforms.isEmpty else { throw .invalidArgument("no platform given; use \(Platform.names)") }
        return platforms
    }
}
