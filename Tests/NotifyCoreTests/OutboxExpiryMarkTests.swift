import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// `outbox-expired`: what it covers, how it moves, and what a start does with a damaged
/// or newer one.
struct OutboxExpiryMarkTests {
    static func mark(in directory: ScratchDirectory) -> OutboxExpiryMark {
        OutboxExpiryMark(path: directory.file("outbox-expired"))
    }

    static func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

    /// The file says whole seconds, as records and expiries do (`Delivery.expiry`): a pass at
    /// 100.5 found expired what expires at 100 or before, and the mark covers those records.
    /// Up to the sequence given. Format 2.
    @Test func coversWhatExpiredUpToItsSequenceAndNothingAfterItsSecond() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let mark = Self.mark(in: directory)
        #expect(try mark.record(expiredAt: Self.at(1_800_000_100.5), sequences: [40], beingTried: []))
        let read = Self.mark(in: directory)
        #expect(read.load() == nil)
        #expect(read.covers(sequence: 40, expiresAt: Self.at(1_800_000_100)), "expired at 100, found at 100.5")
        #expect(read.covers(sequence: 1, expiresAt: Self.at(1_700_000_000)))
        #expect(!read.covers(sequence: 40, expiresAt: Self.at(1_800_000_101)))
        #expect(!read.covers(sequence: 41, expiresAt: Self.at(1_800_000_000)), "accepted after the mark")
        let text = try String(contentsOfFile: directory.file("outbox-expired"), encoding: .utf8)
        #expect(text.contains("\"expired_through\" : \"2027-01-15T08:01:40Z\"") && text.contains("\"sequences_through\" : 40"), "\(text)")
        #expect(text.contains("\"version\" : 2"), "\(text)")
    }

    /// The first format, without `being_tried`, is still read: it left nothing out.
    @Test func readsTheFirstFormat() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try Data(#"{"version":1,"expired_through":"2026-01-01T00:00:00Z","sequences_through":20}"#.utf8)
            .write(to: URL(fileURLWithPath: directory.file("outbox-expired")))
        let read = Self.mark(in: directory)
        #expect(read.load() == nil)
        #expect(read.covers(sequence: 20, expiresAt: Date(timeIntervalSince1970: 1_767_225_600)))
    }

    /// Too many in flight to name in a small file: the mark is not written, and the records
    /// must say it.
    @Test func isNotWrittenWithMoreInFlightThanItHolds() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let mark = Self.mark(in: directory)
        let many = Set(1_000_000..<(1_000_001 + OutboxExpiryMark.mostBeingTried))
        #expect(try !mark.record(expiredAt: Self.at(2000), sequences: [7], beingTried: many))
        #expect(!FileManager.default.fileExists(atPath: directory.file("outbox-expired")))
        let most = Set(9_000_000_000..<(9_000_000_000 + OutboxExpiryMark.mostBeingTried))
        #expect(try mark.record(expiredAt: Self.at(2000), sequences: [7], beingTried: most))
        let size = try FileManager.default.attributesOfItem(atPath: directory.file("outbox-expired"))[.size] as? Int ?? .max
        #expect(size <= OutboxExpiryMark.largestFile, "the largest it writes, read back: \(size) bytes")
        let read = Self.mark(in: directory)
        #expect(read.load() == nil && read.covers(sequence: 7, expiresAt: Self.at(1999)) && !read.covers(sequence: 9_000_000_001, expiresAt: Self.at(1999)))
    }

    /// A later expiry moves the mark on, keeping the highest sequence; one at an earlier
    /// moment (the clock set back) leaves it as it is, and says the mark cannot cover it:
    /// it would cover messages accepted between the two that had not expired.
    @Test func movesOnOnlyWithTheClock() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let mark = Self.mark(in: directory)
        #expect(try mark.record(expiredAt: Self.at(2000), sequences: [50], beingTried: []))
        #expect(try mark.record(expiredAt: Self.at(3000), sequences: [30], beingTried: []))
        #expect(mark.covers(sequence: 50, expiresAt: Self.at(2999)))
        #expect(try !mark.record(expiredAt: Self.at(1000), sequences: [90], beingTried: []), "behind the mark: the records must say it")
        #expect(!mark.covers(sequence: 90, expiresAt: Self.at(500)))
        #expect(mark.covers(sequence: 50, expiresAt: Self.at(2999)))
        #expect(try mark.record(expiredAt: Self.at(3000.5), sequences: [40], beingTried: []), "covered already")
        #expect(mark.sequencesThrough == 50)
        #expect(try mark.record(expiredAt: Self.at(3000), sequences: [60], beingTried: []))
        let read = Self.mark(in: directory)
        _ = read.load()
        #expect(read.covers(sequence: 60, expiresAt: Self.at(2999)) && !read.covers(sequence: 61, expiresAt: Self.at(2999)))
    }

    /// Messages in flight as the mark is written are left out of it: their records say
    /// queued and never tried, but their senders were not told they expired, and a stop
    /// that cuts their attempt short leaves them so. Left out for as long as they are in
    /// flight as a mark is written, and no longer once one of them expires itself.
    @Test func leavesOutWhatIsInFlightAsItIsWritten() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let mark = Self.mark(in: directory)
        #expect(try mark.record(expiredAt: Self.at(2000), sequences: [7, 9], beingTried: [3, 8]))
        let read = Self.mark(in: directory)
        #expect(read.load() == nil)
        #expect(read.covers(sequence: 7, expiresAt: Self.at(1500)) && read.covers(sequence: 9, expiresAt: Self.at(1500)))
        #expect(!read.covers(sequence: 3, expiresAt: Self.at(1500)) && !read.covers(sequence: 8, expiresAt: Self.at(1500)))
        let text = try String(contentsOfFile: directory.file("outbox-expired"), encoding: .utf8)
        #expect(text.contains("\"being_tried\" : [\n    3,\n    8\n  ]"), "\(text)")

        // In the same second, an attempt cut short brings 8 back, and it expires: the mark
        // must now cover it, though it says nothing new of the sequences.
        #expect(try mark.record(expiredAt: Self.at(2000.5), sequences: [8], beingTried: [3]))
        _ = read.load()
        #expect(read.covers(sequence: 8, expiresAt: Self.at(1500)) && !read.covers(sequence: 3, expiresAt: Self.at(1500)))
        // And one in flight now that the mark kept covers (its expiry in the mark's second,
        // not expired when it was written): written again, leaving it out.
        #expect(try mark.record(expiredAt: Self.at(2000.7), sequences: [2], beingTried: [3, 5]))
        _ = read.load()
        #expect(!read.covers(sequence: 5, expiresAt: Self.at(2000)) && read.covers(sequence: 2, expiresAt: Self.at(2000)))
        // A mark with nothing in flight says so by leaving the list out.
        #expect(try mark.record(expiredAt: Self.at(2001), sequences: [3], beingTried: []))
        #expect(try !String(contentsOfFile: directory.file("outbox-expired"), encoding: .utf8).contains("being_tried"))
    }

    /// New ids start past the mark's sequence, even when the id counter was lost and the
    /// outbox emptied: a new message must never be one the mark covers.
    @Test func newIDsStartPastTheMarkWithoutTheIDCounter() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        #expect(try Self.mark(in: directory).record(expiredAt: Self.at(2000), sequences: [5000], beingTried: []))
        let store = OutboxStore(stateDirectory: directory.path)
        _ = store.load()
        #expect(store.highestSequence() == 5000)
    }

    @Test func aMissingFileCoversNothing() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let mark = Self.mark(in: directory)
        #expect(mark.load() == nil)
        #expect(!mark.covers(sequence: 1, expiresAt: .distantPast))
    }

    /// A damaged mark is moved aside: what it covered is past its expiry all the same, and
    /// expires again from its own record.
    @Test(arguments: [#"{"version":1,"expired_through":"2026-01-01T00:00:00Z","sequences_through":99999999999}"#,
                      #"{"version":1,"expired_through":"yesterday","sequences_through":4}"#, #"{"version":1,"#])
    func aDamagedMarkIsMovedAsideWithAWarning(text: String) throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory.file("outbox-expired")))
        let mark = Self.mark(in: directory)
        let warning = try #require(mark.load())
        #expect(warning.contains("could not be read") && warning.contains("moved it to \(directory.file("outbox-expired")).unreadable"), "\(warning)")
        #expect(!mark.covers(sequence: 1, expiresAt: .distantPast))
        #expect(FileManager.default.fileExists(atPath: directory.file("outbox-expired.unreadable")))
    }

    /// One from a newer notifyd stops a start (`OutboxStore.refuseNewerFormat`), as the id
    /// counter does; read anyway, it is left alone.
    @Test func aNewerMarkStopsAStartAndIsLeftAlone() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let newer = Data(#"{"version": 9}"#.utf8)
        try newer.write(to: URL(fileURLWithPath: directory.file("outbox-expired")))
        let refusal = #expect(throws: CoreError.self) { try OutboxStore(stateDirectory: directory.path).refuseNewerFormat() }
        #expect(refusal?.description.contains("outbox-expired was written by a newer notifyd (format 9") == true)
        let mark = Self.mark(in: directory)
        #expect(mark.load()?.contains("was not read") == true)
        #expect(FileManager.default.contents(atPath: directory.file("outbox-expired")) == newer)
    }
}
