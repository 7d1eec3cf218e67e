extension DevBackend {
    /// The tutorial backend's four API operations, told apart by method and path.
    public enum Route: String, Codable, Sendable, CaseIterable {
        /// `POST /api/register?handle=…`
        case create
        /// `PUT /api/register/{id}`
        case upsert
        /// `DELETE /api/register/{id}`
        case delete
        /// `POST /api/notifications?pns=…&to_tag=…`
        case send
    }
}

/// A request resolved to an API route, with the `{id}` path segment if any.
struct RouteMatch: Equatable {
    var route: DevBackend.Route
    var id: String?

    /// ASP.NET routing ignores case and a trailing slash, so this does too.
    init?(method: String, path: String) {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if segments.last == "" { segments.removeLast() }
        guard segments.count >= 2, segments.count <= 3, segments[0].lowercased() == "api" else { return nil }
        let controller = segments[1].lowercased()
        let id = segments.count == 3 ? QueryString.percentDecoded(segments[2]) : nil
        switch (method, controller, id) {
        case ("POST", "register", nil): self.route = .create
        case ("PUT", "register", .some): self.route = .upsert
        case ("DELETE", "register", .some): self.route = .delete
        case ("POST", "notifications", nil): self.route = .send
        default: return nil
        }
        if let id, id.isEmpty { return nil }
        self.id = id
    }
}
