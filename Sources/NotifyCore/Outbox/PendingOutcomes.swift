import NotifyProtocol

/// What became of deliveries, on its way to their senders. An attempt's outcome is written
/// before its sender hears it (a delivered one's excepted: `Outbox.finished`), then kept
/// until the sender has it; the outcome of a delivery whose batch could not be written is
/// dropped. The outbox decides when each step happens; this keeps where each outcome is,
/// so that whether a sender may hear and whether anything is still being written are each
/// answered in one place.
struct PendingOutcomes {
    /// Deliveries on their way to the backend when their batch could not be written: never
    /// accepted, so their outcome is dropped when it comes (see `Outbox.withdraw`).
    private var withdrawn: Set<String> = []
    /// Deliveries whose attempt ended (or that expired) and whose outcome is being
    /// written: their senders hear it once it is on disk (a delivered one's, at once:
    /// `Outbox.finished`), and they do not start again before (`OutboxQueue.takeReady`).
    private(set) var beingWritten: Set<String> = []
    /// Writes of outcomes handed to the writer and not yet done, removals of delivered
    /// messages among them: the outbox is not empty before they are.
    private var writes = 0
    /// Writes of expiries from the active part (each delivery whole) handed to the writer
    /// and not yet done.
    private var expiryWrites = 0
    /// The final statuses of deliveries whose senders have not had their answer yet: kept
    /// until they have it, then forgotten, so a burst of sends leaves nothing behind.
    private(set) var unanswered: [String: DeliveryStatus] = [:]

    // MARK: Withdrawn

    mutating func withdraw(_ id: String) {
        withdrawn.insert(id)
    }

    func isWithdrawn(_ id: String) -> Bool {
        withdrawn.contains(id)
    }

    /// True when `id` was withdrawn: its outcome, come now, is dropped, and it is forgotten.
    mutating func dropIfWithdrawn(_ id: String) -> Bool {
        guard withdrawn.remove(id) != nil else { return false }
        withdrawn.releaseStorageIfEmpty()
        return true
    }

    // MARK: Being written

    mutating func writing(_ id: String) {
        beingWritten.insert(id)
    }

    mutating func written(_ id: String) {
        beingWritten.remove(id)
    }

    func isBeingWritten(_ id: String) -> Bool {
        beingWritten.contains(id)
    }

    /// A write of outcomes was handed to the writer; `writeDone` once it is done.
    mutating func writeStarted() {
        writes += 1
    }

    mutating func writeDone() {
        writes -= 1
    }

    mutating func expiryWriteStarted() {
        expiryWrites += 1
    }

    mutating func expiryWriteDone() {
        expiryWrites -= 1
    }

    /// Expiries from the active part are being written: what moves into the active part now
    /// could be read from disk whole only to expire there, and be held whole behind them.
    var expiryBeingWritten: Bool { expiryWrites > 0 }

    /// No outcome is being written, and no write of outcomes is under way.
    var noneBeingWritten: Bool { beingWritten.isEmpty && writes == 0 }

    mutating func releaseStorageIfEmpty() {
        beingWritten.releaseStorageIfEmpty()
    }

    // MARK: Kept for senders

    /// Keeps a final status until its sender has it (`answered`).
    mutating func keep(_ status: DeliveryStatus) {
        unanswered[status.id] = status
        // A bound in case a sender never asks; each one does today.
        if unanswered.count > 10_000 { unanswered.removeAll() }
    }

    /// The senders of `ids` had their answer: what was kept for them is forgotten.
    mutating func answered(_ ids: [String]) {
        for id in ids { unanswered[id] = nil }
        unanswered.releaseStorageIfEmpty()
    }
}
