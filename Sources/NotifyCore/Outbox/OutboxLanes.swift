/// The outbox's lanes, where the backend keeps them (`BackendAPI.lanes`): one per key
/// (recipient, platform and account) while it has deliveries in flight, numbered for the
/// backend, and shutdown waiting for them all to be gone. The outbox hands the deliveries
/// over and reads the answers (Outbox+Lanes.swift); this keeps each lane's count of
/// deliveries in flight, what waits for its feeder and whether it broke, and ends a lane
/// once nothing is left in it: the id an ending returns is the caller's to end at the backend.
struct OutboxLanes {
    /// One key's lane: what waits to be handed over, and what is in flight in it.
    private struct Lane {
        var id: UInt64
        var toHand: [Delivery] = []
        var feeding = false
        var inFlight = 0
        /// A message of the lane was not accepted, or could not be handed over: nothing
        /// more goes into it, and the key waits until its messages in flight are back.
        var broken = false
    }

    /// Each key's lane while it has deliveries in flight.
    private var lanes: [String: Lane] = [:]
    private var lastID: UInt64 = 0
    /// Shutdown waiting for the lanes to be empty.
    private var emptied: [CheckedContinuation<Void, Never>] = []
    /// Shutdown's deadline passed: no wait for the lanes lasts any more, not even one
    /// that begins after it.
    private var waitingGivenUp = false

    var isEmpty: Bool { lanes.isEmpty }

    /// The keys whose lane broke: no more follow in them.
    var brokenKeys: Set<String> {
        Set(lanes.lazy.filter(\.value.broken).map(\.key))
    }

    /// A delivery `takeReady` started enters its key's lane, a new one if the key has none:
    /// returns the lane's id, and whether a feeder is handing over the lane's earlier
    /// deliveries (or waiting for their credentials), which this one must go behind.
    mutating func enter(_ key: String) -> (lane: UInt64, feeding: Bool) {
        var lane = lanes[key] ?? newLane()
        lane.inFlight += 1
        lanes[key] = lane
        return (lane.id, lane.feeding)
    }

    private mutating func newLane() -> Lane {
        lastID += 1
        return Lane(id: lastID)
    }

    /// Puts a delivery that entered its lane behind those waiting for the lane's feeder.
    /// True when no feeder runs: the caller starts one, which `takeToHand` until nil.
    mutating func waitForFeeder(_ delivery: Delivery) -> Bool {
        let key = delivery.orderKey
        guard var lane = lanes[key] else { return false }
        lane.toHand.append(delivery)
        let start = !lane.feeding
        lane.feeding = true
        lanes[key] = lane
        return start
    }

    /// For the lane's feeder: the deliveries waiting to be handed over, in order, taken
    /// out, and the lane's id; nil once none waits.
    mutating func takeToHand(_ key: String) -> (lane: UInt64, deliveries: [Delivery])? {
        guard let lane = lanes[key], !lane.toHand.isEmpty else { return nil }
        lanes[key]?.toHand = []
        return (lane.id, lane.toHand)
    }

    /// Whether nothing more may be handed over in the key's lane: it broke, or is gone.
    func isBroken(_ key: String) -> Bool {
        lanes[key]?.broken ?? true
    }

    mutating func markBroken(_ key: String) {
        lanes[key]?.broken = true
    }

    /// Whether the delivery waits in its lane to be handed over: not at the backend yet.
    func waitsToBeHanded(_ delivery: Delivery) -> Bool {
        lanes[delivery.orderKey]?.toHand.contains { $0.id == delivery.id } ?? false
    }

    /// The lane's feeder handed over what waited: returns the lane's id if that ended it.
    mutating func feederDone(_ key: String) -> UInt64? {
        lanes[key]?.feeding = false
        return removeIfIdle(key)
    }

    /// A delivery of the lane is back: anything but a delivery breaks it. Returns the
    /// lane's id if that ended it.
    mutating func returned(_ key: String, delivered: Bool) -> UInt64? {
        guard lanes[key] != nil else { return nil }
        lanes[key]?.inFlight -= 1
        if !delivered { lanes[key]?.broken = true }
        return removeIfIdle(key)
    }

    /// A lane with none in flight, none waiting to be handed over and no feeder is gone;
    /// once all are, shutdown stops waiting.
    private mutating func removeIfIdle(_ key: String) -> UInt64? {
        guard let lane = lanes[key], lane.inFlight <= 0, lane.toHand.isEmpty, !lane.feeding else { return nil }
        lanes[key] = nil
        if lanes.isEmpty {
            lanes.releaseStorageIfEmpty()
            stopWaiting()
        }
        return lane.id
    }

    /// Resumes `continuation` once no lane has a delivery in flight, or waiting is given up.
    mutating func waitUntilEmpty(_ continuation: CheckedContinuation<Void, Never>) {
        if lanes.isEmpty || waitingGivenUp {
            continuation.resume()
        } else {
            emptied.append(continuation)
        }
    }

    private mutating func stopWaiting() {
        for waiter in emptied { waiter.resume() }
        emptied = []
    }

    /// Ends every wait for the lanes, now and from now on.
    mutating func giveUpWaiting() {
        waitingGivenUp = true
        stopWaiting()
    }
}
