extension DevBackend {
    /// One send the backend handed to the hub, valid or not.
    public struct Push: Codable, Sendable, Equatable {
        /// 1 for the first push since start or the last reset.
        public var sequence: Int
        /// The authenticated user who sent it.
        public var sender: String
        public var toTag: String
        /// The `pns` query value, lowercased as the tutorial does.
        public var pns: String
        /// Exactly what the backend built and would hand to the hub.
        public var payload: String
        /// Whether the hub would take the payload: well-formed and within the
        /// platform's size limit.
        public var valid: Bool
        /// What the phone would show, read back from the parsed payload; nil when invalid.
        public var displayedText: String?
        /// Ids of the registrations the push went to.
        public var recipients: [String]
        /// Whether the backend reported success (200) for this send.
        public var accepted: Bool

        public init(
            sequence: Int, sender: String, toTag: String, pns: String, payload: String,
            valid: Bool, displayedText: String?, recipients: [String], accepted: Bool
        ) {
            self.sequence = sequence
            self.sender = sender
            self.toTag = toTag
            self.pns = pns
            self.payload = payload
            self.valid = valid
            self.displayedText = displayedText
            self.recipients = recipients
            self.accepted = accepted
        }

        private enum CodingKeys: String, CodingKey {
            case sequence, sender, toTag, pns, payload, valid, displayedText, recipients, accepted
        }

        // Written by hand so a missing text appears as an explicit null for
        // readers of /_dev/state instead of a silently absent key.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sequence, forKey: .sequence)
            try container.encode(sender, forKey: .sender)
            try container.encode(toTag, forKey: .toTag)
            try container.encode(pns, forKey: .pns)
            try container.encode(payload, forKey: .payload)
            try container.encode(valid, forKey: .valid)
            try container.encode(displayedText, forKey: .displayedText)
            try container.encode(recipients, forKey: .recipients)
            try container.encode(accepted, forKey: .accepted)
        }
    }
}
