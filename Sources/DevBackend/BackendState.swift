/// Everything the backend remembers, guarded as one value so each request sees
/// and changes it atomically.
struct BackendState: Sendable {
    /// Caps on the histories, so a demo backend left running does not grow forever;
    /// far above what any test produces.
    static let historyLimit = 10_000

    var store = RegistrationStore()
    var installations = InstallationStore()
    var faults = FaultList()
    private var pushHistory = History<DevBackend.Push>(limit: historyLimit)
    private var requestHistory = History<DevBackend.LoggedRequest>(limit: historyLimit)
    private var nextPushSequence = 1
    private var notificationRequestHistory = History<DevBackend.NotificationRequest>(limit: historyLimit)
    private var nextNotificationRequestSequence = 1
    /// The `Idempotency-Key`s of the sends taken, per user, oldest first, the last `historyLimit`.
    private var idempotencyKeys: Set<String> = []
    private var idempotencyOrder: [String] = []

    /// Whether a send of `user` with `key` was taken already.
    func tookIdempotencyKey(_ key: String, user: String) -> Bool {
        idempotencyKeys.contains(user + "\u{0}" + key)
    }

    /// A send of `user` with `key` was taken.
    mutating func rememberIdempotencyKey(_ key: String, user: String) {
        let entry = user + "\u{0}" + key
        guard idempotencyKeys.insert(entry).inserted else { return }
        idempotencyOrder.append(entry)
        if idempotencyOrder.count > Self.historyLimit {
            idempotencyKeys.remove(idempotencyOrder.removeFirst())
        }
    }

    /// Stores a push, numbering it.
    mutating func recordPush(_ build: (_ sequence: Int) -> DevBackend.Push) -> DevBackend.Push {
        let push = build(nextPushSequence)
        nextPushSequence += 1
        pushHistory.append(push)
        return push
    }

    /// Stores a notification request, numbering it.
    mutating func recordNotificationRequest(
        _ build: (_ sequence: Int) -> DevBackend.NotificationRequest
    ) -> DevBackend.NotificationRequest {
        let request = build(nextNotificationRequestSequence)
        nextNotificationRequestSequence += 1
        notificationRequestHistory.append(request)
        return request
    }

    mutating func log(_ request: DevBackend.LoggedRequest) {
        requestHistory.append(request)
    }

    mutating func reset() {
        store.reset()
        installations.reset()
        notificationRequestHistory.removeAll()
        nextNotificationRequestSequence = 1
        faults.clear()
        pushHistory.removeAll()
        idempotencyKeys.removeAll()
        idempotencyOrder.removeAll()
        requestHistory.removeAll()
        nextPushSequence = 1
    }

    /// Oldest first, the last `historyLimit`.
    var pushes: [DevBackend.Push] { pushHistory.elements }
    /// Oldest first, the last `historyLimit`.
    var requests: [DevBackend.LoggedRequest] { requestHistory.elements }
    /// Oldest first, the last `historyLimit`.
    var notificationRequests: [DevBackend.NotificationRequest] { notificationRequestHistory.elements }

    var snapshot: DevBackend.StateSnapshot {
        DevBackend.StateSnapshot(
            registrations: store.registrations, pushes: pushes, requests: requests, faults: faults.rules,
            installations: installations.installations, notificationRequests: notificationRequests
        )
    }
}

extension DevBackend {
    /// The whole inspectable state, as `GET /_dev/state` returns it.
    public struct StateSnapshot: Codable, Sendable, Equatable {
        public var registrations: [Registration]
        public var pushes: [Push]
        public var requests: [LoggedRequest]
        /// The fault rules still in force, with their remaining counts.
        public var faults: [FaultRule]
        /// The installations dialect's devices, in the order first stored.
        public var installations: [Installation]
        /// The installations dialect's notification requests, taken or refused.
        public var notificationRequests: [NotificationRequest]

        public init(
            registrations: [Registration], pushes: [Push], requests: [LoggedRequest], faults: [FaultRule],
            installations: [Installation] = [], notificationRequests: [NotificationRequest] = []
        ) {
            self.registrations = registrations
            self.pushes = pushes
            self.requests = requests
            self.faults = faults
            self.installations = installations
            self.notificationRequests = notificationRequests
        }
    }
}
