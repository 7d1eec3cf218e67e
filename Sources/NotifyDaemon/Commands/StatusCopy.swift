import NotifyCore
import Synchronization

/// The last `status` result, encoded, with the count of changes it was made at. While
/// nothing it reports has changed, `status` is answered from it on the socket loop, as
/// `ping` is: no thread of the pool or actor is woken for it.
///
/// The copy is right only while every change to what `status` reports counts itself
/// (`StatusChanges`). With `verifyingWith` (the tests' daemons), no answer comes from the
/// copy: each `status` is made afresh and compared with the copy kept at the same count,
/// and a difference, a change that did not count itself, is logged as an error
/// (`staleMessage`), which the tests look for.
final class StatusCopy: Sendable {
    private let changes: StatusChanges
    private let copy = Mutex<(madeAt: UInt64, encoded: [UInt8])?>(nil)
    private let verifier: Logger?

    static let staleMessage = "status: the copy kept while nothing counted a change differs from status made afresh"

    init(changes: StatusChanges, verifyingWith verifier: Logger? = nil) {
        self.changes = changes
        self.verifier = verifier
    }

    /// The count to make a new copy at: read before anything the result is made from,
    /// so that a change made meanwhile leaves the copy already out of date.
    var changesNow: UInt64 { changes.value }

    /// The encoded result, if nothing changed since it was made (never while verifying).
    var current: [UInt8]? {
        guard verifier == nil else { return nil }
        return kept(at: changes.value)
    }

    /// The copy, if it was made at `count`.
    private func kept(at count: UInt64) -> [UInt8]? {
        copy.withLock { copy in copy.flatMap { $0.madeAt == count ? $0.encoded : nil } }
    }

    /// While verifying, compares `encoded`, made afresh from the count `count`, with the
    /// copy kept at that count, when nothing counted a change meanwhile either.
    func verify(_ encoded: [UInt8], madeAt count: UInt64) {
        guard let verifier, changes.value == count, let kept = kept(at: count), kept != encoded else { return }
        verifier.error("\(Self.staleMessage): kept \(String(decoding: kept, as: UTF8.self)), afresh \(String(decoding: encoded, as: UTF8.self))")
    }

    func keep(_ encoded: [UInt8], madeAt count: UInt64) {
        copy.withLock { copy in
            // Two slow answers at once: the later count wins.
            if copy.map({ $0.madeAt <= count }) ?? true { copy = (count, encoded) }
        }
    }
}
