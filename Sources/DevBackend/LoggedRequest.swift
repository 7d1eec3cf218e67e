extension DevBackend {
    /// One API request as seen by the backend. Deliberately holds no headers, no
    /// query and no body, so no password or device token can leak through it.
    public struct LoggedRequest: Codable, Sendable, Equatable {
        public var method: String
        /// The path without the query string.
        public var path: String
        /// nil for requests that matched no API route.
        public var route: Route?
        /// nil when an injected fault dropped the connection without an answer.
        public var status: Int?
        /// The authenticated user name; nil when authentication failed or was absent.
        public var user: String?
        /// The query carried an `apikey`, which access logs keep (whether, never what).
        public var apiKeyInQuery: Bool

        public init(method: String, path: String, route: Route?, status: Int?, user: String?, apiKeyInQuery: Bool = false) {
            self.method = method
            self.path = path
            self.route = route
            self.status = status
            self.user = user
            self.apiKeyInQuery = apiKeyInQuery
        }

        private enum CodingKeys: String, CodingKey {
            case method, path, route, status, user
            case apiKeyInQuery = "api_key_in_query"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            method = try container.decode(String.self, forKey: .method)
            path = try container.decode(String.self, forKey: .path)
            route = try container.decodeIfPresent(Route.self, forKey: .route)
            status = try container.decodeIfPresent(Int.self, forKey: .status)
            user = try container.decodeIfPresent(String.self, forKey: .user)
            apiKeyInQuery = try container.decodeIfPresent(Bool.self, forKey: .apiKeyInQuery) ?? false
        }

        // Explicit nulls rather than absent keys, so the JSON shape is always the same.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(method, forKey: .method)
            try container.encode(path, forKey: .path)
            try container.encode(route, forKey: .route)
            try container.encode(status, forKey: .status)
            try container.encode(user, forKey: .user)
            try container.encode(apiKeyInQuery, forKey: .apiKeyInQuery)
        }
    }
}
