/// A push notification service, as the backend names it in a registration's
/// `Platform` and in `pns=`. `gcm` and `fcm` are the same service under the old and
/// new name; which one a backend accepts is configuration.
public enum Platform: String, Codable, Sendable, CaseIterable, CustomStringConvertible {
    case apns
    case fcm
    case gcm
    case wns

    public var description: String { rawValue }

    /// The platform names accepted on the command line and in requests.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
