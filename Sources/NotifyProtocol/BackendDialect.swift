/// Which of Microsoft's two backends notifyd talks to (`backend_api`).
///
/// - `registrations`: the AppBackend of the tutorial "send push notifications to specific
///   users": a user and password (HTTP Basic), registration ids the backend hands out,
///   and one send per platform to a user.
/// - `installations`: the "backend service" of the newer tutorials (`PushNotificationsAPI`):
///   an app's API key (`apikey` header), an installation whose id the device chooses, and
///   notification requests to tags, each going to every platform.
public enum BackendDialect: String, Codable, Sendable, CaseIterable, CustomStringConvertible {
    case registrations
    case installations

    public var description: String { rawValue }

    public static var names: String { allCases.map(\.rawValue).joined(separator: " or ") }

    /// What the secret of a login is called in messages.
    public var secretName: String {
        switch self {
        case .registrations: "password"
        case .installations: "API key"
        }
    }
}
