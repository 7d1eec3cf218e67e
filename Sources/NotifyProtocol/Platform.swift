/// A push notification service, as the backend names it in a registration's
/// `Platform` and in `pns=`. `fcmv1`, `fcm` and `gcm` are the one Android service under
/// its three names (FCM v1, and the legacy APIs before it); which name a backend accepts
/// is configuration (`android_name`), whichever of them was given.
public enum Platform: String, Codable, Sendable, CaseIterable, CustomStringConvertible {
    case apns
    case fcm
    case fcmv1
    case gcm
    case wns

    public var description: String { rawValue }

    /// The platform names accepted on the command line and in requests.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Android, under any of its names.
    public var isAndroid: Bool { Self.androidNames.contains(self) }

    /// Android's names, the current one first.
    public static let androidNames: [Platform] = [.fcmv1, .fcm, .gcm]

    /// Google retired the legacy FCM HTTP API (and GCM before it) on 20 June 2024: a
    /// backend still registers devices under these names, but nothing reaches them.
    public var isLegacyAndroid: Bool { self == .fcm || self == .gcm }

    /// A name it does not know is refused naming those it does (the decoder's own words
    /// were "Cannot initialize Platform from invalid String value …").
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let platform = Platform(rawValue: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(PrintableText.line(name))' is not a platform; one of \(Self.names)")
        }
        self = platform
    }
}
