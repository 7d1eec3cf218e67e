extension DevBackend {
    /// Which requests a fault rule applies to.
    public enum FaultScope: String, Codable, Sendable, CaseIterable {
        case create, upsert, delete, send
        case installationUpsert, installationDelete, notificationRequest
        /// Every API route (never the /_dev/ control routes).
        case any

        func covers(_ route: Route) -> Bool {
            self == .any || rawValue == route.rawValue
        }
    }

    /// A failure to inject before the backend handles a request, to test how a
    /// client copes with throttling, outages, slowness and broken connections.
    public struct FaultRule: Codable, Sendable, Equatable {
        public var route: FaultScope
        /// Answer with this status instead of handling the request.
        public var status: Int?
        /// Seconds, sent as a `Retry-After` header with `status`.
        public var retryAfter: Int?
        /// Seconds to wait before answering (or handling normally, if nothing else is set).
        public var delay: Double?
        /// Close the connection without any response.
        public var drop: Bool?
        /// How many matching requests this rule still applies to; nil means until cleared.
        public var count: Int?
        /// The body sent with `status`, in place of the usual note (e.g. a malformed reply to a 200).
        public var body: String?
        /// Sent as a `Location` header with `status`, for redirects.
        public var location: String?
        /// The body echoes the request's headers, as some debugging proxies and frameworks do.
        public var echoHeaders: Bool?
        /// Handle the request, then close the connection without the response: a reply
        /// lost after the backend took the request.
        public var loseReply: Bool?

        public init(
            route: FaultScope,
            status: Int? = nil,
            retryAfter: Int? = nil,
            delay: Double? = nil,
            drop: Bool? = nil,
            count: Int? = nil,
            body: String? = nil,
            location: String? = nil,
            echoHeaders: Bool? = nil,
            loseReply: Bool? = nil
        ) {
            self.route = route
            self.status = status
            self.retryAfter = retryAfter
            self.delay = delay
            self.drop = drop
            self.count = count
            self.body = body
            self.location = location
            self.echoHeaders = echoHeaders
            self.loseReply = loseReply
        }

        /// Why the rule cannot be applied, or nil when it is usable.
        var problem: String? {
            if let status, !(100...999).contains(status) { return "status must be a 3-digit HTTP status" }
            if let retryAfter, retryAfter < 0 { return "retryAfter must not be negative" }
            if let delay, !(delay >= 0 && delay <= 3600) { return "delay must be between 0 and 3600 seconds" }
            if let count, count < 0 { return "count must not be negative" }
            return nil
        }
    }
}
