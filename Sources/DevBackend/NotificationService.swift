/// The push services the send route knows, from its `pns` query value.
enum NotificationService: Sendable {
    case apns
    /// Android through the legacy API; the tutorial's revisions call it "gcm" or "fcm".
    case android
    /// Android through FCM v1, in a backend updated for it.
    case fcmV1
    case wns

    /// `pns.ToLower()` in the tutorial's switch, over what `options` has the backend know;
    /// nil for anything it does not handle.
    init?(pns: String, options: DevBackend.Options) {
        guard let service = options.knownServices[pns.lowercased()] else { return nil }
        self = service
    }

    /// Registration platforms this service delivers to.
    var platforms: Set<String> {
        switch self {
        case .apns: ["apns"]
        case .android: ["gcm", "fcm"]
        case .fcmV1: ["fcmv1"]
        case .wns: ["wns"]
        }
    }

    /// The hub's payload limit in UTF-8 bytes.
    var payloadLimit: Int {
        switch self {
        case .apns: 4096
        case .android: 4096
        case .fcmV1: 4096
        case .wns: 5120
        }
    }
}
