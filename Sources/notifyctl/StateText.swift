import NotifyProtocol

/// Registration states in words, for the human `status`.
enum StateText {
    static func words(_ state: RegistrationState) -> String {
        switch state {
        case .notLoggedIn: "not logged in"
        case .noBackend: "no backend configured"
        case .noToken: "no device token"
        case .unregistered: "off (unregistered on request)"
        case .registering: "registering"
        case .registered: "registered"
        case .retrying: "not registered yet, retrying"
        case .unregistering: "off, not deleted at the backend yet, retrying"
        case .unauthorized: "refused: the backend refused the credentials"
        case .rejected: "refused: the backend refused the registration"
        // A state from a newer notifyd: shown as readably as its name allows.
        default: String(state.rawValue.map { $0 == "_" ? " " : $0 })
        }
    }

    /// States in which nothing happens until the user acts (logs in, sets a token...).
    static func waitsForUser(_ state: RegistrationState) -> Bool {
        [.notLoggedIn, .noBackend, .noToken, .unregistered].contains(state)
    }
}
