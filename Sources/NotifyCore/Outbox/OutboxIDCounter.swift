#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The highest outbox id number that may have been handed out, kept in `outbox-ids`
/// so that no id is ever given twice: not after a restart, and not after the outbox was
/// emptied, when no entry is left to count from. `notifyctl outbox cancel ID` then names
/// one message for the life of the state directory, never a later one that took its id.
///
/// The mark is written ahead, to the next multiple of `step`, and always before an entry
/// above it is written (`AtomicFile` fsyncs it before it returns): a restart continues after
/// the mark, skipping at most a step of ids, and a burst of sends costs one more write
/// per thousand messages, not one per message.
final class OutboxIDCounter: Sendable {
    static let step = 1000
    /// The file holds one number: anything larger is not one notifyd wrote.
    static let largestFile = 4096
    /// The highest id number notifyd hands out (ids are ten digits): a number read from a
    /// file above it, or below 0, is not one notifyd wrote, and would overflow or reuse ids.
    static let largestSequence = 9_999_999_000

    /// After a damaged counter, ids start at a floor read off the wall clock: ten ids a
    /// second since 2023-11-14 (1,700,000,000 s). Ids handed out before the damage were
    /// counted up one per message from an earlier floor, so they stay below this one unless
    /// more than ten messages a second were sent, on average, over all the time since the
    /// last damage (or since 2023). The floor reaches the last id in 2055.
    static func clockFloor(now: Date) -> Int {
        let ticks = (now.timeIntervalSince1970 - 1_700_000_000) * 10
        return Int(max(0, min(ticks.rounded(.up), Double(largestSequence - step))))
    }

    let path: String
    private let calls: FileSystemCalls
    private let now: @Sendable () -> Date
    /// What the file says, once read.
    private let reserved = Mutex<Int?>(nil)

    init(path: String, calls: FileSystemCalls = .system, now: @escaping @Sendable () -> Date = Date.init) {
        self.path = path
        self.calls = calls
        self.now = now
    }

    /// Reads the mark, and says why when the file could not be used (then ids continue
    /// after the clock's floor, or the highest found in the outbox if that is higher).
    func load() -> String? {
        let (mark, warning) = read()
        reserved.withLock { $0 = mark }
        return warning
    }

    /// The highest id number that may have been handed out.
    var highest: Int {
        reserved.withLock { value in
            if value == nil { value = read().mark }
            return value!
        }
    }

    /// Records on disk, before an entry numbered `sequence` is written, that ids up to it
    /// may be in use.
    func cover(_ sequence: Int) throws(CoreError) {
        try reserved.withLock { (value: inout Int?) throws(CoreError) in
            let current = value ?? read().mark
            value = current
            guard sequence > current else { return }
            guard sequence < Self.largestSequence else {
                throw .storage("the outbox has handed out every id it can (\(Self.largestSequence)); move \(path) and the outbox aside to start again")
            }
            let mark = (sequence / Self.step + 1) * Self.step
            try StateFile.write(Record(version: Record.currentVersion, reservedThrough: mark), to: path, using: calls, naming: "the outbox id counter")
            value = mark
        }
    }

    func refuseNewerFormat() throws(CoreError) {
        try DiskFormat.refuseNewer(path, supported: Record.currentVersion, limit: Self.largestFile)
    }

    private func read() -> (mark: Int, warning: String?) {
        switch StateFile.read(path, limit: Self.largestFile, supported: Record.currentVersion, as: Record.self, { try Self.sequence($0.reservedThrough) }) {
        case .value(let mark):
            return (mark, nil)
        case .missing:
            return (0, nil)
        case .newer(let newer):
            // Left for the notifyd that wrote it; a daemon does not start over it.
            return (0, "outbox id counter \(path) was not read: \(newer)")
        case .damaged(let reason):
            let moved = StateFile.moveAside(path, to: path + ".unreadable")
            // The ids of messages delivered and removed are known nowhere else now: new ones
            // start past any of them (see `clockFloor`), not after the highest left on disk.
            let floor = Self.clockFloor(now: now())
            return (floor, "outbox id counter \(path) could not be read (\(reason)); \(moved). New ids start at \(floor + 1), past any handed out before")
        }
    }

    /// `number`, read from a file, when it is an id number notifyd hands out.
    static func sequence(_ number: Int) throws -> Int {
        guard (0...largestSequence).contains(number) else {
            throw DiskFormat.OutOfRange(description: "it holds \(number), not an id number notifyd hands out (0 to \(largestSequence))")
        }
        return number
    }

    /// `outbox-ids` as written on disk.
    struct Record: Codable {
        static let currentVersion = 1

        var version: Int
        var reservedThrough: Int

        enum CodingKeys: String, CodingKey {
            case version
            case reservedThrough = "reserved_through"
        }
    }
}
