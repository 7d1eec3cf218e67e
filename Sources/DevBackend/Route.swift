extension DevBackend {
    /// The API operations of both backend samples, told apart by method and path.
    public enum Route: String, Codable, Sendable, CaseIterable {
        /// `POST /api/register?handle=…`
        case create
        /// `PUT /api/register/{id}`
        case upsert
        /// `DELETE /api/register/{id}`
        case delete
        /// `POST /api/notifications?pns=…&to_tag=…`
        case send
        /// `PUT /api/notifications/installations` (installations dialect)
        case installationUpsert
        /// `DELETE /api/notifications/installations/{installationId}` (installations dialect)
        case installationDelete
        /// `POST /api/notifications/requests` (installations dialect)
        case notificationRequest

        /// The backend sample that has this route.
        var api: API {
            switch self {
            case .create, .upsert, .delete, .send: .registrations
            case .installationUpsert, .installationDelete, .notificationRequest: .installations
            }
        }
    }
}

/// A request resolved to an API route of either dialect, with the `{id}` path segment if any.
struct RouteMatch: Equatable {
    var route: DevBackend.Route
    var id: String?

    /// ASP.NET routing ignores case and a trailing slash, so this does too.
    init?(method: String, path: String) {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if segments.last == "" { segments.removeLast() }
        guard segments.count >= 2, segments.count <= 4, segments[0].lowercased() == "api" else { return nil }
        let controller = segments[1].lowercased()
        let action = segments.count >= 3 ? segments[2].lowercased() : nil
        var id: String?
        switch (method, controller, segments.count) {
        case ("POST", "register", 2): self.route = .create
        case ("PUT", "register", 3): self.route = .upsert; id = segments[2]
        case ("DELETE", "register", 3): self.route = .delete; id = segments[2]
        case ("POST", "notifications", 2): self.route = .send
        case ("PUT", "notifications", 3) where action == "installations": self.route = .installationUpsert
        case ("DELETE", "notifications", 4) where action == "installations": self.route = .installationDelete; id = segments[3]
        case ("POST", "notifications", 3) where action == "requests": self.route = .notificationRequest
        default: return nil
        }
        if let id {
            let decoded = QueryString.percentDecoded(id)
            if decoded.isEmpty { return nil }
            self.id = decoded
        }
    }
}
