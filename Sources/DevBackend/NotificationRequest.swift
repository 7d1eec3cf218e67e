extension DevBackend {
    /// One `POST /api/notifications/requests` the backend read, taken or refused.
    public struct NotificationRequest: Codable, Sendable, Equatable {
        /// 1 for the first request since start or the last reset.
        public var sequence: Int
        /// As sent; nil when absent or null.
        public var text: String?
        /// As sent; nil when absent or null.
        public var action: String?
        /// As sent; empty means every device.
        public var tags: [String]
        public var silent: Bool
        /// Platform (`fcmv1` or `fcm`, and `apns`) to the payload exactly as built from its
        /// template; empty when the request was refused before any was built.
        public var payloads: [String: String]
        /// The text a device would show, read back from the Android payload (the one that
        /// carries the text in every template); nil when a payload is invalid or lacks it.
        public var displayedText: String?
        /// The action the app would receive, read back the same way.
        public var displayedAction: String?
        /// Ids of the installations it went to, in store order.
        public var recipients: [String]
        /// Whether the backend answered 200 and the hub pushed it.
        public var accepted: Bool
        /// What the backend answered: 200, 400 or 422.
        public var status: Int
        /// Why it was refused, for people; nil when accepted.
        public var refusal: String?

        public init(
            sequence: Int, text: String?, action: String?, tags: [String], silent: Bool,
            payloads: [String: String], displayedText: String?, displayedAction: String?,
            recipients: [String], accepted: Bool, status: Int = 200, refusal: String? = nil
        ) {
            self.sequence = sequence
            self.text = text
            self.action = action
            self.tags = tags
            self.silent = silent
            self.payloads = payloads
            self.displayedText = displayedText
            self.displayedAction = displayedAction
            self.recipients = recipients
            self.accepted = accepted
            self.status = status
            self.refusal = refusal
        }

        private enum CodingKeys: String, CodingKey {
            case sequence, text, action, tags, silent, payloads, displayedText, displayedAction, recipients, accepted, status, refusal
        }

        // Explicit nulls rather than absent keys, so the JSON shape is always the same.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sequence, forKey: .sequence)
            try container.encode(text, forKey: .text)
            try container.encode(action, forKey: .action)
            try container.encode(tags, forKey: .tags)
            try container.encode(silent, forKey: .silent)
            try container.encode(payloads, forKey: .payloads)
            try container.encode(displayedText, forKey: .displayedText)
            try container.encode(displayedAction, forKey: .displayedAction)
            try container.encode(recipients, forKey: .recipients)
            try container.encode(accepted, forKey: .accepted)
            try container.encode(status, forKey: .status)
            try container.encode(refusal, forKey: .refusal)
        }
    }
}
