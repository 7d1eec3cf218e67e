/// Everything the backend remembers, guarded as one value so each request sees
/// and changes it atomically.
struct BackendState: Sendable {
    /// Caps on the histories, so a demo backend left running does not grow forever;
    /// far above what any test produces.
    static let historyLimit = 10_000

    var store = RegistrationStore()
    var faults = FaultList()
    private(set) var pushes: [DevBackend.Push] = []
    private(set) var requests: [DevBackend.LoggedRequest] = []
    private var nextPushSequence = 1

    /// Stores a push, numbering it.
    mutating func recordPush(_ build: (_ sequence: Int) -> DevBackend.Push) -> DevBackend.Push {
        let push = build(nextPushSequence)
        nextPushSequence += 1
        pushes.append(push)
        if pushes.count > Self.historyLimit { pushes.removeFirst() }
        return push
    }

    mutating func log(_ request: DevBackend.LoggedRequest) {
        requests.append(request)
        if requests.count > Self.historyLimit { requests.removeFirst() }
    }

    mutating func reset() {
        store.reset()
        faults.clear()
        pushes.removeAll()
        requests.removeAll()
        nextPushSequence = 1
    }

    var snapshot: DevBackend.StateSnapshot {
        DevBackend.StateSnapshot(
            registrations: store.registrations, pushes: pushes, requests: requests, faults: faults.rules
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

        public init(registrations: [Registration], pushes: [Push], requests: [LoggedRequest], faults: [FaultRule]) {
            self.registrations = registrations
            self.pushes = pushes
            self.requests = requests
            self.faults = faults
        }
    }
}
