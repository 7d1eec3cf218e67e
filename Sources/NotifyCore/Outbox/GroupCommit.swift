/// The outbox's group commit: new deliveries gather while the previous batch is being
/// written, then go to disk together. Batches are numbered in the order they are taken,
/// and written one at a time, so a batch is written once `written` reached its number:
/// none is taken while the write of one is under way (`started`). The copies gathered
/// are numbered here too, in the order they arrive (`takeSequence`).
///
/// A batch is one file, which notifyd reads back whole at start: it takes what gathered
/// up to `OutboxStore.largestFile` (by `OutboxEntryRecord.sizeBound`), and the rest goes
/// in the next one. The copies of one message are never parted: they are stored together
/// or not at all.
struct GroupCommit {
    private var collecting: [(copies: [Delivery], size: Int)] = []
    private var nextNumber = 1
    private var writtenUpTo = 0
    private var batchOf: [String: Int] = [:]
    private var failures: [String: CoreError] = [:]
    /// The next delivery's sequence: after every one on disk (`continueSequence`).
    private var nextSequence = 1
    /// The write of the batch last taken, until `written`: its senders and shutdown wait for it.
    private(set) var write: Task<Void, Never>?
    /// The last batch was written: the next is sent while it is (Outbox+Commit.swift).
    private(set) var writesWork = false

    /// The bytes of their messages' text.
    private(set) var gatheredBytes = 0

    /// The copies gathered for the next batches, not queued yet.
    var gathered: Int { collecting.reduce(0) { $0 + $1.copies.count } }

    /// Those copies themselves, for a refusal that names whom the outbox waits for.
    var gatheredCopies: [Delivery] { collecting.flatMap(\.copies) }

    /// The copies of one message (one per platform), to be written in the same batch.
    mutating func collect(_ copies: [Delivery]) {
        collecting.append((copies, copies.reduce(0) { $0 + OutboxEntryRecord.sizeBound(of: $1) }))
        gatheredBytes += copies.reduce(0) { $0 + $1.message.utf8.count }
        for delivery in copies { batchOf[delivery.id] = nextNumber }
    }

    /// Numbers a new delivery: its place in the arrival order, never given twice.
    mutating func takeSequence() -> Int {
        defer { nextSequence += 1 }
        return nextSequence
    }

    /// At start: the sequences go on after `highest`, the highest on disk.
    mutating func continueSequence(after highest: Int) {
        nextSequence = highest + 1
    }

    /// What has gathered, up to `budget` bytes of file (at least one message whatever its
    /// size), as the next batch to write; nil when nothing has, or while a batch is being
    /// written.
    mutating func takeBatch(budget: Int = OutboxStore.largestFile) -> (Int, [Delivery])? {
        guard write == nil, !collecting.isEmpty else { return nil }
        var size = 0
        var taken = 0
        for message in collecting {
            guard taken == 0 || size + message.size <= budget else { break }
            size += message.size
            taken += 1
        }
        let batch = collecting.prefix(taken).flatMap(\.copies)
        gatheredBytes -= batch.reduce(0) { $0 + $1.message.utf8.count }
        collecting.removeFirst(taken)
        nextNumber += 1
        // What did not fit waits for the next batch; its senders wait for that one.
        for message in collecting {
            for delivery in message.copies { batchOf[delivery.id] = nextNumber }
        }
        return (nextNumber - 1, batch)
    }

    /// Callers parked until their batch is written (`Outbox.afterCommit`; for tests: a
    /// sender still waiting has not been told).
    var waitingCount = 0

    func batch(of id: String) -> Int? {
        batchOf[id]
    }

    /// A batch holding some of `ids` that is not written yet, to wait for; nil once they
    /// all are. Asked again after each wait: what did not fit in a batch moved to the next.
    func unwrittenBatch(of ids: [String]) -> Int? {
        ids.lazy.compactMap { batchOf[$0] }.first { !isWritten($0) }
    }

    func isWritten(_ batch: Int) -> Bool {
        batch <= writtenUpTo
    }

    /// The write of the batch just taken started: no other is taken until it is `written`.
    mutating func started(_ write: Task<Void, Never>) {
        self.write = write
    }

    /// Records the outcome of a batch. `alreadySent`: the
    /// deliveries of a batch that failed which had gone to the backend while it was written.
    mutating func written(_ number: Int, _ batch: [Delivery], failure: CoreError?, alreadySent: Set<String> = []) {
        write = nil
        writesWork = failure == nil
        writtenUpTo = number
        for delivery in batch {
            batchOf[delivery.id] = nil
            guard let failure else { continue }
            failures[delivery.id] = alreadySent.contains(delivery.id)
                ? .storage("\(failure.description); the message had gone to the backend meanwhile and may have been delivered")
                : failure
        }
        batchOf.releaseStorageIfEmpty()
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
