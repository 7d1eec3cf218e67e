/// The outbox's group commit: new deliveries gather while the previous batch is being
/// written, then go to disk together. Batches are numbered in the order they are taken,
/// and written one at a time, so a batch is written once `written` reached its number.
struct GroupCommit {
    private var collecting: [Delivery] = []
    private var nextNumber = 1
    private var writtenUpTo = 0
    private var batchOf: [String: Int] = [:]
    private var failures: [String: CoreError] = [:]
    private var waiters: [Int: [CheckedContinuation<Void, Never>]] = [:]

    mutating func collect(_ delivery: Delivery) {
        collecting.append(delivery)
        batchOf[delivery.id] = nextNumber
    }

    /// What has gathered, as the next batch to write; nil when nothing has.
    mutating func takeBatch() -> (Int, [Delivery])? {
        guard !collecting.isEmpty else { return nil }
        defer {
            collecting = []
            nextNumber += 1
        }
        return (nextNumber, collecting)
    }

    func batch(of id: String) -> Int? {
        batchOf[id]
    }

    func isWritten(_ batch: Int) -> Bool {
        batch <= writtenUpTo
    }

    mutating func waitFor(_ batch: Int, _ continuation: CheckedContinuation<Void, Never>) {
        if isWritten(batch) {
            continuation.resume()
        } else {
            waiters[batch, default: []].append(continuation)
        }
    }

    /// Records the outcome of a batch and wakes those waiting for it.
    mutating func written(_ number: Int, _ batch: [Delivery], failure: CoreError?) {
        writtenUpTo = number
        for delivery in batch {
            batchOf[delivery.id] = nil
            if let failure { failures[delivery.id] = failure }
        }
        for continuation in waiters.removeValue(forKey: number) ?? [] { continuation.resume() }
        batchOf.releaseStorageIfEmpty()
        waiters.releaseStorageIfEmpty()
    }

    /// The write failure of any of `ids`, forgotten once asked for (each send asks once).
    mutating func takeFailure(_ ids: [String]) -> CoreError? {
        var failure: CoreError?
        for id in ids {
            if let error = failures.removeValue(forKey: id) { failure = error }
        }
        failures.releaseStorageIfEmpty()
        return failure
    }
}
