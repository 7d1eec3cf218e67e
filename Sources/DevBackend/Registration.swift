extension DevBackend {
    /// A device registration as the hub stores it after an upsert.
    public struct Registration: Codable, Sendable, Equatable {
        public var id: String
        /// As sent by the client: "apns", "wns", "mpns", "fcm" or "gcm".
        public var platform: String
        /// The PNS handle (device token, FCM token or channel URI).
        public var handle: String
        /// The client's tags plus the server-added `username:<user>`, without duplicates.
        public var tags: [String]

        public init(id: String, platform: String, handle: String, tags: [String]) {
            self.id = id
            self.platform = platform
            self.handle = handle
            self.tags = tags
        }
    }
}
