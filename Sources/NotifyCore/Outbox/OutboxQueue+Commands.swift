/// What the `outbox` commands change in the queue: `retry`, `cancel` and `purge` (`cancel`
/// also takes back the deliveries of a batch that could not be written).
extension OutboxQueue {
    /// `outbox retry`: drops the waits before the next attempt (of every queued delivery,
    /// or of `id` and those queued with it) and lifts a hold for credentials. Returns how
    /// many queued deliveries this releases.
    public mutating func retryNow(_ id: String?) -> Int {
        var keys = Set(queued.filter { id == nil || $0.id == id }.map(\.orderKey))
        if let id, let position = deferredPosition(of: id) { keys.insert(deferred.orderKey(at: position)) }
        for key in keys { retryAt[key] = nil }
        paused = false
        pauseReason = nil
        let deferredCount = id == nil ? deferred.count : keys.reduce(0) { $0 + deferred.count(of: $1) }
        return queued.indices.filter { keys.contains(queued[$0].orderKey) && !queued.isInFlight(at: $0) }.count + deferredCount
    }

    /// `outbox cancel`: removes a delivery that is not being sent right now.
    public mutating func cancel(_ id: String) -> Delivery? {
        if let index = queuedIndex(of: id) {
            guard !queued.isInFlight(at: index) else { return nil }
            let delivery = queued.remove(at: index)
            untriedPlaces[id] = nil
            if !deferred.isEmpty { freed.insert(delivery.orderKey) }
            return delivery
        }
        if let position = deferredPosition(of: id) {
            let delivery = deferred.delivery(at: position)
            deferred.remove(at: position)
            deferred.tidy()
            return delivery
        }
        if let position = dead.position(of: id) {
            return dead.remove(at: position)
        }
        return nil
    }

    /// Forgets the failed and expired deliveries, and those held for an account that is
    /// not logged in; returns their ids.
    public mutating func purgeDead() -> [String] {
        var held: [String] = []
        let account = self.account
        queued.removeAll { delivery, inFlight in
            guard Self.isHeld(delivery, account: account) && !inFlight else { return false }
            held.append(delivery.id)
            return true
        }
        for id in held { untriedPlaces[id] = nil }
        if !deferred.isEmpty {
            let positions = deferred.positions { position in
                let key = deferred.keys[Int(deferred.entries[position].key)]
                return key.account == nil || key.account != account
            }
            for position in positions {
                held.append(deferred.delivery(at: position).id)
                deferred.remove(at: position)
            }
            deferred.tidy()
        }
        return dead.removeAll() + held
    }
}
