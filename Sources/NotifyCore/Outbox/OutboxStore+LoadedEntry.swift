#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

extension OutboxStore {
    /// One delivery found on disk, and where its record is. Without `keepingMessages`, a
    /// delivery that `DeferredDeliveries` can keep as an index entry comes without its
    /// message, which is read back from `stored` at its turn.
    public struct LoadedEntry: Sendable {
        /// Read whole, or only its index fields (`OutboxRecordIndex`): a third of the
        /// size, and no string of its own, for each of 100,000 messages held at once.
        private enum Form {
            // Boxed: the rare whole one must not make every entry its size.
            indirect case whole(Delivery)
            case indexed(OutboxRecordIndex)
        }

        private var form: Form
        public var stored: StoredEntry?
        /// The bytes of the message's text, left out of `delivery` or not.
        public var bytes: Int

        init(_ delivery: Delivery, stored: StoredEntry?, bytes: Int) {
            form = .whole(delivery)
            self.stored = stored
            self.bytes = bytes
        }

        init(_ index: OutboxRecordIndex, stored: StoredEntry) {
            form = .indexed(index)
            self.stored = stored
            bytes = index.messageBytes
        }

        /// The field `whole` reads of a whole delivery, or `indexed` of an index entry,
        /// without making a delivery of the index entry.
        private func read<Value>(_ whole: (Delivery) -> Value, _ indexed: (OutboxRecordIndex) -> Value) -> Value {
            switch form {
            case .whole(let delivery): whole(delivery)
            case .indexed(let index): indexed(index)
            }
        }

        public var delivery: Delivery { read({ $0 }, \.delivery) }
        public var id: String { read(\.id, \.id) }
        public var sequence: Int { read(\.sequence, \.sequence) }
        public var state: DeliveryState { read(\.state, \.state) }
        public var expiresAt: Date { read(\.expiresAt, \.expiresAt) }
        /// No attempt and no error recorded (an indexed record is one waiting its first turn).
        public var untried: Bool { read(\.neverTried, { $0.state == .queued }) }
    }
}
