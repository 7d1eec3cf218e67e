/// The hub's registrations, in creation order, plus the ids it has handed out.
struct RegistrationStore: Sendable {
    private(set) var registrations: [DevBackend.Registration] = []
    /// Ids from `create` not yet used by an upsert: the hub knows them, so a PUT works.
    private var pending: Set<String> = []
    /// Never reset, so ids stay unique for the whole life of the process.
    private var issued = 0

    enum UpsertOutcome: Equatable {
        case stored
        /// The hub answers 410 Gone: the id was never issued, was deleted or expired.
        case gone
    }

    /// The tutorial's register POST: reuse the first registration holding `handle`
    /// and delete the others (whoever owns them), else issue a fresh id.
    mutating func create(handle: String?) -> String {
        if let handle {
            let matching = registrations.filter { $0.handle == handle }
            if let first = matching.first {
                let extra = Set(matching.dropFirst().map(\.id))
                registrations.removeAll { extra.contains($0.id) }
                return first.id
            }
        }
        let id = newID()
        pending.insert(id)
        return id
    }

    mutating func upsert(_ registration: DevBackend.Registration) -> UpsertOutcome {
        if let index = registrations.firstIndex(where: { $0.id == registration.id }) {
            registrations[index] = registration
            return .stored
        }
        guard pending.remove(registration.id) != nil else { return .gone }
        registrations.append(registration)
        return .stored
    }

    /// False when no registration has that id (the hub's 404).
    mutating func delete(id: String) -> Bool {
        guard let index = registrations.firstIndex(where: { $0.id == id }) else { return false }
        registrations.remove(at: index)
        return true
    }

    /// The id is gone for good, as when the hub expires a registration: ids are
    /// never reissued, so removing it is enough.
    mutating func expire(id: String) {
        registrations.removeAll { $0.id == id }
        pending.remove(id)
    }

    /// Registrations holding any of `tags` on one of `platforms`, in creation order.
    func targets(anyOf tags: Set<String>, platforms: Set<String>) -> [DevBackend.Registration] {
        registrations.filter { registration in
            platforms.contains(registration.platform) && registration.tags.contains(where: tags.contains)
        }
    }

    mutating func reset() {
        registrations.removeAll()
        pending.removeAll()
    }

    /// Shaped like the hub's ids: two long random numbers and a sequence number,
    /// digits and dashes only.
    private mutating func newID() -> String {
        issued += 1
        let range: ClosedRange<UInt64> = 1_000_000_000_000_000...9_999_999_999_999_999
        return "\(UInt64.random(in: range))-\(UInt64.random(in: range))-\(issued)"
    }
}
