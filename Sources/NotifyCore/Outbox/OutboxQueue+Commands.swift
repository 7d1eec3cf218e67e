/// What the `outbox` commands change in the queue: `retry`, `cancel` and `purge` (`cancel`
/// also takes back the deliveries of a batch that could not be written).
extension OutboxQueue {
    /// `outbox retry`: drops the waits before the next attempt (of every queued delivery,
    /// or of `id` and those queued with it) and lifts a hold for credentials. Returns how
    /// many queued deliveries this releases.
    public mutating func retryNow(_ id: String?) -> Int {
        let chosen = queued.filter { id == nil || $0.id == id }
        let keys = Set(chosen.map(\.orderKey))
        for key in keys { retryAt[key] = nil }
        paused = false
        return queued.indices.filter { keys.contains(queued[$0].orderKey) && !queued.isInFlight(at: $0) }.count
    }

    /// `outbox cancel`: removes a delivery that is not being sent right now.
    public mutating func cancel(_ id: String) -> Delivery? {
        if let index = queuedIndex(of: id) {
            guard !queued.isInFlight(at: index) else { return nil }
            return queued.remove(at: index)
        }
        if let index = dead.firstIndex(where: { $0.id == id }) {
            return dead.remove(at: index)
        }
        return nil
    }

    /// Forgets the failed and expired deliveries, and those held for an account that is
    /// not logged in; returns them.
    public mutating func purgeDead() -> [Delivery] {
        var held: [Delivery] = []
        let account = self.account
        queued.removeAll { delivery, inFlight in
            guard Self.isHeld(delivery, account: account) && !inFlight else { return false }
            held.append(delivery)
            return true
        }
        defer { dead = [] }
        return dead + held
    }
}
