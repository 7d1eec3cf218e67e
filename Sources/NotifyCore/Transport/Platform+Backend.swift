#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

extension Platform {
    /// The name to send the backend: Android under the one name it knows (older tutorial
    /// backends say `gcm`, newer ones `fcm`), the others as they are.
    public func backendName(android: Platform) -> String {
        switch self {
        case .fcm, .gcm: android.rawValue
        case .apns, .wns: rawValue
        }
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
