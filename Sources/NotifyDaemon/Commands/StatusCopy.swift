import NotifyCore
import Synchronization

/// The last `status` result, encoded, with the count of changes it was made at. While
/// nothing it reports has changed, `status` is answered from it on the socket loop, as
/// `ping` is: no thread of the pool or actor is woken for it.
final class StatusCopy: Sendable {
    private let changes: StatusChanges
    private let copy = Mutex<(madeAt: UInt64, encoded: [UInt8])?>(nil)

    init(changes: StatusChanges) {
        self.changes = changes
    }

    /// The count to make a new copy at: read before anything the result is made from,
    /// so that a change made meanwhile leaves the copy already out of date.
    var changesNow: UInt64 { changes.value }

    /// The encoded result, if nothing changed since it was made.
    var current: [UInt8]? {
        let now = changes.value
        return copy.withLock { copy in copy.flatMap { $0.madeAt == now ? $0.encoded : nil } }
    }

    func keep(_ encoded: [UInt8], madeAt count: UInt64) {
        copy.withLock { copy in
            // Two slow answers at once: the later count wins.
            if copy.map({ $0.madeAt <= count }) ?? true { copy = (count, encoded) }
        }
    }
}
