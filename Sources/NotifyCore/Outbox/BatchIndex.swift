#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Which batch file each delivery still pending in one lives in, and which of them have a
/// file of their own besides. A batch holds the deliveries accepted together, whose
/// sequence numbers follow one another: it is kept as its range and a bit per number, not
/// a table entry per delivery, so a large outbox costs a few bytes per message here.
final class BatchIndex: Sendable {
    enum Removal { case none, pending(String), finished(String) }

    private struct Batch {
        var name: String
        var first: Int
        var last: Int
        /// A bit per sequence number from `first`: set while that member is pending.
        var bits: [UInt64]
        var pending: Int

        func isPending(_ sequence: Int) -> Bool {
            guard sequence >= first && sequence <= last else { return false }
            let offset = sequence - first
            return bits[offset >> 6] & (1 << UInt64(offset & 63)) != 0
        }

        mutating func clear(_ sequence: Int) {
            let offset = sequence - first
            bits[offset >> 6] &= ~(1 << UInt64(offset & 63))
            pending -= 1
        }
    }

    private struct State {
        /// By `first`; `overlapping` once two ranges overlap (entries edited by hand), when
        /// every batch is looked at, not only the one a search finds.
        var batches: [Batch] = []
        var overlapping = false
        /// Members with a file of their own, by id, which goes with the member: one a start
        /// found and could not read (a newer notifyd's), or one written when the line saying
        /// the member left could not be (a member that gets one otherwise leaves its batch:
        /// `OutboxStore.save`).
        var withOwnFile: Set<String> = []
        /// The sequence numbers of members whose id does not begin with theirs.
        var oddIDs: [String: Int] = [:]
    }
    private let state = Mutex(State())

    func add(_ name: String, members: [(id: String, sequence: Int)], withOwnFiles: Set<String>) {
        guard let first = members.map(\.sequence).min(), let last = members.map(\.sequence).max() else { return }
        state.withLock { state in
            // A range far wider than its members is not one notifyd wrote: split into one
            // batch entry per member would cost as much as a table, so it is rare and cheap.
            let span = last - first + 1
            let pieces: [(Int, Int, [(id: String, sequence: Int)])] = span <= 4 * members.count + 64
                ? [(first, last, members)] : members.map { ($0.sequence, $0.sequence, [$0]) }
            for (low, high, included) in pieces {
                var batch = Batch(name: name, first: low, last: high, bits: Array(repeating: 0, count: (high - low) / 64 + 1), pending: 0)
                for member in included where !batch.isPending(member.sequence) {
                    let offset = member.sequence - low
                    batch.bits[offset >> 6] |= 1 << UInt64(offset & 63)
                    batch.pending += 1
                    if Delivery.sequence(inID: member.id) != member.sequence { state.oddIDs[member.id] = member.sequence }
                }
                let index = Self.insertionIndex(of: low, in: state.batches)
                if index > 0 && state.batches[index - 1].last >= low { state.overlapping = true }
                if index < state.batches.count && state.batches[index].first <= high { state.overlapping = true }
                state.batches.insert(batch, at: index)
            }
            state.withOwnFile.formUnion(withOwnFiles)
        }
    }

    private static func insertionIndex(of first: Int, in batches: [Batch]) -> Int {
        var low = 0
        var high = batches.count
        while low < high {
            let middle = (low + high) / 2
            if batches[middle].first <= first { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the batch `sequence` is pending in.
    private static func find(_ sequence: Int, in state: State) -> Int? {
        if state.overlapping { return state.batches.firstIndex { $0.isPending(sequence) } }
        let index = insertionIndex(of: sequence, in: state.batches) - 1
        guard index >= 0, state.batches[index].isPending(sequence) else { return nil }
        return index
    }

    private static func sequence(of id: String, in state: State) -> Int? {
        state.oddIDs[id] ?? Delivery.sequence(inID: id)
    }

    /// The name of the batch the delivery of `sequence` is pending in.
    func name(of sequence: Int) -> String? {
        state.withLock { state in Self.find(sequence, in: state).map { state.batches[$0].name } }
    }

    /// The name of the batch `id` is pending in.
    func name(ofMember id: String) -> String? {
        state.withLock { state in
            Self.sequence(of: id, in: state).flatMap { Self.find($0, in: state) }.map { state.batches[$0].name }
        }
    }

    /// A member got a file of its own that its batch's log does not say it left: removed
    /// with it.
    func noteOwnFile(_ id: String) {
        state.withLock { state in
            if let sequence = Self.sequence(of: id, in: state), Self.find(sequence, in: state) != nil { state.withOwnFile.insert(id) }
        }
    }

    /// Where `id` was, and whether it may have a file of its own (always, outside a batch).
    func remove(_ id: String) -> (Removal, ownFile: Bool) {
        state.withLock { state in
            guard let sequence = Self.sequence(of: id, in: state), let index = Self.find(sequence, in: state) else { return (.none, true) }
            state.oddIDs[id] = nil
            let ownFile = state.withOwnFile.remove(id) != nil
            state.batches[index].clear(sequence)
            let name = state.batches[index].name
            guard state.batches[index].pending == 0 else { return (.pending(name), ownFile) }
            state.batches.remove(at: index)
            // A batch split by member (see `add`) is finished once none of its pieces is
            // left (each goes once none of its members is pending).
            if state.batches.contains(where: { $0.name == name }) {
                return (.pending(name), ownFile)
            }
            return (.finished(name), ownFile)
        }
    }

    func releaseStorageIfEmpty() {
        state.withLock { state in
            state.batches.releaseStorageIfEmpty()
            state.withOwnFile.releaseStorageIfEmpty()
            state.oddIDs.releaseStorageIfEmpty()
        }
    }
}
