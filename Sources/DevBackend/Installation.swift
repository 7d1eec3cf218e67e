extension DevBackend {
    /// A device installation as the hub stores it after `PUT /api/notifications/installations`.
    public struct Installation: Codable, Sendable, Equatable {
        /// The client's own id for the device; a PUT with the same id replaces the installation.
        public var id: String
        /// `apns`, or the Android name the backend accepts (`fcmv1`, or `fcm`).
        public var platform: String
        /// The device token the push service delivers to.
        public var pushChannel: String
        /// As the client sent them, without duplicates; the server adds none.
        public var tags: [String]

        public init(id: String, platform: String, pushChannel: String, tags: [String]) {
            self.id = id
            self.platform = platform
            self.pushChannel = pushChannel
            self.tags = tags
        }
    }
}

/// The hub's installations, in the order they were first stored.
struct InstallationStore: Sendable {
    /// The hub refuses an installation with more tags than this.
    static let tagLimit = 60

    private(set) var installations: [DevBackend.Installation] = []

    /// Creates the installation, or replaces the one with its id in place.
    mutating func upsert(_ installation: DevBackend.Installation) {
        if let index = installations.firstIndex(where: { $0.id == installation.id }) {
            installations[index] = installation
        } else {
            installations.append(installation)
        }
    }

    /// The hub's delete is idempotent: an unknown id is no error.
    mutating func delete(id: String) {
        installations.removeAll { $0.id == id }
    }

    /// Installations on one of `platforms` holding any of `tags`, or all of them on those
    /// platforms when `tags` is nil; in store order.
    func targets(anyOf tags: Set<String>?, platforms: Set<String>) -> [DevBackend.Installation] {
        installations.filter { installation in
            guard platforms.contains(installation.platform) else { return false }
            guard let tags else { return true }
            return installation.tags.contains(where: tags.contains)
        }
    }

    mutating func reset() {
        installations.removeAll()
    }
}
