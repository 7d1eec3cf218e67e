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
import NotifyProtocol
import Synchronization

/// What has expired, kept in `outbox-expired`, one small record for any number of
/// messages: every message numbered up to `sequencesThrough` whose record still says queued
/// and whose expiry is at `expiredThrough` or before has expired. A week offline expires
/// everything queued at once; writing each of 100,000 messages again to say so took 40 s
/// of fsyncs and a 4 KiB file each, and a start then read 100,000 files back. Only a message
/// never tried is left to the mark: its record has nothing else to say, and a start takes
/// only a record without attempts for one the mark covers. One tried is written again
/// whole, with its attempts and last error; so is one never tried when the clock is behind
/// the mark kept.
///
/// A message past its expiry needs no mark to be expired: the next pass finds it. The mark
/// makes the expiry last once a sender was told of it, whatever the clock does next: a
/// wall clock set back must not send again, after a restart, what was reported expired.
/// The sequence bound keeps out what was accepted after the mark was written: with the
/// clock set back, a new message's expiry may fall before it.
///
/// A message's expiry is a whole second (`Delivery.expiry`), as its record says it, and the
/// mark is written for the second of the pass that expired them: it covers only messages
/// that pass found expired, or one before it, and those in flight (`Mark.beingTried`).
///
/// A notifyd from before the mark ignores the file and expires the same messages from their
/// own records, as it always did: nothing expired is sent after a downgrade either, unless
/// the clock was set back as well. One that knows the mark's first format, without
/// `being_tried`, would take what it leaves out for expired: format 2 stops its start.
final class OutboxExpiryMark: Sendable {
    struct Mark: Equatable {
        var expiredThrough: Date
        var sequencesThrough: Int
        /// The messages in flight as it was written: past their expiry, their records never
        /// tried, but not reported expired. Their attempt rewrites the record (tried, or
        /// gone once delivered) unless a stop cuts it short: then a start must find them
        /// queued, as they were. As many as attempts run at once.
        var beingTried: Set<Int> = []

        /// Whether a queued record numbered `sequence`, to expire at `expiresAt`, is one the
        /// mark says expired.
        func covers(sequence: Int, expiresAt: Date) -> Bool {
            sequence <= sequencesThrough && expiresAt <= expiredThrough && !beingTried.contains(sequence)
        }
    }

    /// The file holds one small object: anything larger is not one notifyd wrote. It holds
    /// `mostBeingTried` sequences at most, 16 bytes each as written.
    static let largestFile = FileContents.mebibyte
    /// More in flight past their expiry than this (thousands may be, after a machine slept
    /// through their expiry with `max_connections` high) and the mark is not written: the
    /// expired records are written whole instead.
    static let mostBeingTried = 50_000

    let path: String
    private let calls: FileSystemCalls
    private let mark = Mutex<Mark?>(nil)

    init(path: String, calls: FileSystemCalls = .system) {
        self.path = path
        self.calls = calls
    }

    /// The mark as a start reads it, and why the file could not be used (then every message
    /// past its expiry expires again at the first pass, from its own record).
    func load() -> String? {
        let (read, warning) = Self.read(path)
        mark.withLock { $0 = read }
        return warning
    }

    /// Whether a queued record numbered `sequence`, to expire at `expiresAt`, expired before.
    func covers(sequence: Int, expiresAt: Date) -> Bool {
        mark.withLock { $0?.covers(sequence: sequence, expiresAt: expiresAt) } ?? false
    }

    /// Records that the queued messages numbered up to the highest of `sequences` whose
    /// expiry is `now` or before expired, but for those `beingTried`, fsynced before it
    /// returns; false when the mark cannot say it (the clock is behind the mark kept, or too
    /// many are in flight), and the records of `sequences` must. The mark says `now`'s
    /// second: an expiry is a whole second (`Delivery.expiry`), so one in it, at or before
    /// `now`, expired in this pass. A mark for a time before the one kept (the clock was set
    /// back) would cover messages accepted since that had not expired: it is not written.
    ///
    /// The mark written before need not stay left out: a message it left out has been tried
    /// since, or expires in this pass, or is in flight again and among `beingTried`.
    func record(expiredAt now: Date, sequences: [Int], beingTried: Set<Int>) throws(CoreError) -> Bool {
        guard let highest = sequences.max() else { return true }
        let through = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        return try mark.withLock { (kept: inout Mark?) throws(CoreError) -> Bool in
            if let kept, through < kept.expiredThrough { return false }
            if beingTried.count > Self.mostBeingTried { return false }
            // Said already, unless the mark kept leaves out one that expired now, or covers
            // one in flight now (its expiry in the mark's second, it was not expired then).
            if let kept, through == kept.expiredThrough, highest <= kept.sequencesThrough,
               kept.beingTried.isEmpty || kept.beingTried.isDisjoint(with: sequences), beingTried.isSubset(of: kept.beingTried) {
                return true
            }
            let next = Mark(expiredThrough: through, sequencesThrough: max(highest, kept?.sequencesThrough ?? 0),
                            beingTried: beingTried.subtracting(sequences))
            try StateFile.write(Record(next), to: path, using: calls, naming: "the outbox's expiry mark")
            kept = next
            return true
        }
    }

    /// The highest sequence the mark covers (0 without one): a new message must be numbered
    /// past it, even after the id counter was lost.
    var sequencesThrough: Int {
        mark.withLock { $0?.sequencesThrough ?? 0 }
    }

    func refuseNewerFormat() throws(CoreError) {
        try DiskFormat.refuseNewer(path, supported: Record.currentVersion, limit: Self.largestFile)
    }

    private static func read(_ path: String) -> (Mark?, warning: String?) {
        let reading = StateFile.read(path, limit: largestFile, supported: Record.currentVersion, as: Record.self) { record in
            Mark(expiredThrough: record.expiredThrough, sequencesThrough: try OutboxIDCounter.sequence(record.sequencesThrough),
                 beingTried: Set(try (record.beingTried ?? []).map(OutboxIDCounter.sequence)))
        }
        switch reading {
        case .value(let mark):
            return (mark, nil)
        case .missing:
            return (nil, nil)
        case .newer(let newer):
            // A start stops on it first (`refuseNewerFormat`); read without that check, it is left alone.
            return (nil, "outbox expiry mark \(path) was not read: \(newer)")
        case .damaged(let reason):
            let moved = StateFile.moveAside(path, to: path + ".unreadable")
            return (nil, "outbox expiry mark \(path) could not be read (\(reason)); \(moved). Messages past their expiry expire again from their own records")
        }
    }

    /// `outbox-expired` as written on disk.
    struct Record: Codable {
        /// 2: with `being_tried`, and expiries in whole seconds.
        static let currentVersion = 2

        var version: Int
        var expiredThrough: Date
        var sequencesThrough: Int
        /// Absent when none was in flight.
        var beingTried: [Int]?

        init(_ mark: Mark) {
            version = Self.currentVersion
            expiredThrough = mark.expiredThrough
            sequencesThrough = mark.sequencesThrough
            beingTried = mark.beingTried.isEmpty ? nil : mark.beingTried.sorted()
        }

        enum CodingKeys: String, CodingKey {
            case version
            case expiredThrough = "expired_through"
            case sequencesThrough = "sequences_through"
            case beingTried = "being_tried"
        }
    }
}
