/// The push services the send route knows, from its `pns` query value.
enum NotificationService: Sendable {
    case apns
    /// Android; the tutorial's revisions call it "gcm" or "fcm".
    case android
    case wns

    /// `pns.ToLower()` in the tutorial's switch; nil for anything it does not handle.
    init?(pns: String) {
        switch pns.lowercased() {
        case "apns": self = .apns
        case "gcm", "fcm": self = .android
        case "wns": self = .wns
        default: return nil
        }
    }

    /// Registration platforms this service delivers to.
    var platforms: Set<String> {
        switch self {
        case .apns: ["apns"]
        case .android: ["gcm", "fcm"]
        case .wns: ["wns"]
        }
    }

    /// The hub's payload limit in UTF-8 bytes.
    var payloadLimit: Int {
        switch self {
        case .apns: 4096
        case .android: 4096
        case .wns: 5120
        }
    }
}
