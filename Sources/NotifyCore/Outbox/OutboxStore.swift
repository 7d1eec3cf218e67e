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

/// The outbox on disk: `outbox/<id>.json`, one file per delivery, each written atomically
/// (and fsynced) before the sender hears "accepted", removed once the backend took it.
/// A crash at any moment leaves each delivery either absent (never accepted) or whole.
///
/// Deliveries accepted together (a burst of pipelined sends) are written as one
/// `batch-<last id>.json`, so a burst costs one file and two fsyncs instead of a file and
/// two fsyncs each. A batch member that changes later gets its own `<id>.json`, which wins
/// over the batch's copy, and leaves the batch as one that was sent does: appended to the
/// batch's `.done` log. The batch goes once all its members have left.
///
/// A message that expires before it was tried is not written again: its record stays
/// queued where it is, and `outbox-expired` says it expired (`OutboxExpiryMark`).
public struct OutboxStore: Sendable {
    public let directory: String
    private let calls: FileSystemCalls
    private let batches = BatchIndex()
    private let doneLogs: AppendLogs
    private let ids: OutboxIDCounter
    private let expiryMark: OutboxExpiryMark
    /// Removal logs open at most (see `AppendLogs`).
    public static let logsKeptOpen = 8
    /// The largest file the outbox writes, and so the most it reads of one: a batch stops
    /// short of it (`GroupCommit`), and whatever one message holds, its copies fit (each
    /// string of an entry comes from the `send` request line or the `login` one, at most
    /// 256 KiB each, and `OutboxEntryRecord.sizeBound` allows for JSON's escapes). A larger
    /// file is not one notifyd wrote: it is moved aside unread, like any unreadable entry.
    public static let largestFile = 16 * FileContents.mebibyte

    public init(stateDirectory: String, calls: FileSystemCalls = .system) {
        directory = FilePath.join(stateDirectory, "outbox")
        self.calls = calls
        doneLogs = AppendLogs(limit: Self.logsKeptOpen, calls: calls)
        // Beside the outbox, not in it: the outbox holds messages, and is empty when none wait.
        ids = OutboxIDCounter(path: FilePath.join(stateDirectory, "outbox-ids"), calls: calls)
        expiryMark = OutboxExpiryMark(path: FilePath.join(stateDirectory, "outbox-expired"), calls: calls)
    }

    /// Every delivery on disk, and warnings for files that could not be read (moved aside).
    public func load() -> ([Delivery], warnings: [String]) {
        let (entries, warnings) = loadEntries(keepingMessages: true)
        return (entries.map(\.delivery), warnings)
    }

    /// `load`, each delivery with where its record is, in sequence order.
    public func loadEntries(keepingMessages: Bool = false) -> ([LoadedEntry], warnings: [String]) {
        var warnings: [String] = []
        // Beside the outbox, and read without it: the next id goes past both.
        if let warning = ids.load() { warnings.append(warning) }
        if let warning = expiryMark.load() { warnings.append(warning) }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return ([], warnings) }
        var single: [String: LoadedEntry] = [:]
        var batched: [String: [LoadedEntry]] = [:]
        func entry(_ delivery: Delivery, _ stored: StoredEntry) -> LoadedEntry {
            let bytes = delivery.message.utf8.count
            guard !keepingMessages, DeferredDeliveries.fits(delivery) else { return LoadedEntry(delivery, stored: stored, bytes: bytes) }
            var delivery = delivery
            delivery.message = ""
            return LoadedEntry(delivery, stored: stored, bytes: bytes)
        }
        // The account's strings are kept once, not once per message: most share one.
        var lastAccount: AccountKey?
        func indexEntry(_ bytes: UnsafeRawBufferPointer, _ stored: StoredEntry) -> LoadedEntry? {
            guard !keepingMessages, var index = OutboxRecordIndex.read(bytes) else { return nil }
            if index.account == lastAccount { index.account = lastAccount } else { lastAccount = index.account }
            return LoadedEntry(index, stored: stored)
        }
        // One buffer for every file: a buffer each, freed between files, left holes in the
        // heap that what stays (the index) was then spread over.
        var buffer: [UInt8] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = FilePath.join(directory, name)
            do {
                let count = try FileContents.readWhole(path, limit: Self.largestFile, into: &buffer)
                if name.hasPrefix(Self.batchPrefix) {
                    let (ranges, version) = try buffer.withUnsafeBytes { try BatchEntryRanges.layout(of: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                    try DiskFormat.check(version: version, supported: OutboxEntryRecord.currentVersion)
                    var members: [LoadedEntry] = []
                    members.reserveCapacity(ranges.count)
                    for range in ranges {
                        let stored = StoredEntry(offset: UInt32(range.lowerBound), length: UInt32(range.count))
                        if let indexed = buffer.withUnsafeBytes({ indexEntry(UnsafeRawBufferPointer(rebasing: $0[range]), stored) }) {
                            members.append(indexed)
                            continue
                        }
                        let delivery = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: Data(buffer[range])).delivery()
                        members.append(entry(delivery, stored))
                    }
                    batched[String(name.dropLast(".json".count))] = members
                } else if let indexed = buffer.withUnsafeBytes({ indexEntry(UnsafeRawBufferPointer(rebasing: $0[..<count]), .inOwnFile) }) {
                    single[indexed.id] = indexed
                } else {
                    let data = Data(buffer[..<count])
                    _ = try DiskFormat.checkVersion(of: data, supported: OutboxEntryRecord.currentVersion)
                    let delivery = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
                    single[delivery.id] = entry(delivery, .inOwnFile)
                }
            } catch let newer as DiskFormat.NewerFormat {
                // Left in place: the notifyd that wrote it can still send it.
                warnings.append("outbox entry \(path) was not read: \(newer)")
            } catch {
                warnings.append("outbox entry \(path) could not be read (\(StateFile.reason(error))); \(StateFile.moveAside(path, to: path + ".unreadable"))")
            }
        }
        buffer = []
        // Looked up once per batch and per member: a list would make a large outbox slow to load.
        let present = Set(names)
        for name in names where name.hasPrefix(Self.batchPrefix) && name.hasSuffix(".done") {
            let batch = String(name.dropLast(".done".count))
            // Its batch was finished (or moved aside): the log has nothing left to say.
            if batched[batch] == nil && !present.contains(batch + ".json") { unlink(path(name)) }
        }
        var deliveries: [LoadedEntry] = []
        deliveries.reserveCapacity(single.count + batched.values.reduce(0) { $0 + $1.count })
        deliveries += single.values
        for (batch, members) in batched {
            let done = Set(((try? String(contentsOfFile: path(batch) + ".done", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init))
            let pending = done.isEmpty ? members : members.filter { !done.contains($0.id) }
            if pending.isEmpty {
                forget(batch)
                continue
            }
            // A member whose own file was read leaves the batch here, as `save` has it leave
            // (a stop came between the two); one whose file could not be read is the batch's.
            // Should the line not be written, those stay members, their files removed with them.
            var members = pending
            if !single.isEmpty {
                let read = pending.filter { single[$0.id] != nil }.map(\.id)
                if !read.isEmpty && doneLogs.append(read, to: path(batch) + ".done") == nil {
                    members = pending.filter { single[$0.id] == nil }
                }
            }
            if members.isEmpty {
                forget(batch)
                continue
            }
            // One with a file of its own (read, or a newer notifyd's left unread) has it
            // removed with it; the file, when read, is what is queued.
            batches.add(batch, members: members.map { ($0.id, $0.sequence) },
                        withOwnFiles: Set(members.map(\.id).filter { present.contains($0 + ".json") }))
            deliveries += single.isEmpty ? members : members.filter { single[$0.id] == nil }
        }
        // Sorted by key and position, then moved once: sorting the entries themselves moved
        // each a dozen times.
        var order = deliveries.indices.map { (sequence: deliveries[$0].sequence, position: $0) }
        order.sort { $0.sequence != $1.sequence ? $0.sequence < $1.sequence : deliveries[$0.position].id < deliveries[$1.position].id }
        deliveries = order.map { deliveries[$0.position] }
        return (deliveries, warnings)
    }

    /// What `read` could not read: the warning to log and the reason to list.
    public struct Unreadable: Error, Sendable {
        public var warning: String
        public var reason: String
    }

    /// The record of `id` as stored at `stored` (found by `loadEntries` or written by
    /// `save`): the delivery with its message. A record that cannot be read is handled as
    /// `load` handles one: its file is moved aside (`.unreadable`), a warning says so.
    public func read(_ id: String, at stored: StoredEntry) -> Result<Delivery, Unreadable> {
        let batch = stored.isOwnFile ? nil : Delivery.sequence(inID: id).flatMap(batches.name(of:))
        let file = batch.map { path($0) + ".json" } ?? path(id) + ".json"
        do {
            let data: Data
            if batch != nil {
                data = try FileContents.load(file, offset: Int(stored.offset), count: Int(stored.length))
            } else {
                data = try FileContents.load(file, limit: Self.largestFile)
                _ = try DiskFormat.checkVersion(of: data, supported: OutboxEntryRecord.currentVersion)
            }
            let delivery = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
            guard delivery.id == id else { throw DiskFormat.OutOfRange(description: "it holds \(delivery.id) where \(id) was") }
            return .success(delivery)
        } catch let problem as FileContents.Problem where problem == .missing {
            return .failure(Unreadable(warning: "outbox entry \(id) was not found in \(file): \(problem)", reason: "its file is gone"))
        } catch {
            let moved = StateFile.moveAside(file, to: file + ".unreadable")
            return .failure(Unreadable(warning: "outbox entry \(id) in \(file) could not be read (\(StateFile.reason(error))); \(moved)",
                                       reason: "its file could not be read; \(moved)"))
        }
    }

    /// Persists deliveries accepted together, with one file when there are several;
    /// returns where each record is, in their order.
    @discardableResult
    public func save(batch deliveries: [Delivery]) throws(CoreError) -> [StoredEntry] {
        guard let last = deliveries.last else { return [] }
        guard deliveries.count > 1 else {
            try save(last)
            return [.inOwnFile]
        }
        try AtomicFile.ensureDirectory(directory)
        try ids.cover(deliveries.map(\.sequence).max() ?? 0)
        let data: Data
        let ranges: [Range<Int>]
        do {
            (data, ranges) = try OutboxBatchRecord(deliveries).stateFileWithRanges()
        } catch {
            throw .storage("cannot encode outbox entries: \(error)")
        }
        let batch = Self.batchPrefix + last.id
        try AtomicFile.write(data, to: path(batch) + ".json", using: calls)
        batches.add(batch, members: deliveries.map { ($0.id, $0.sequence) }, withOwnFiles: [])
        return ranges.map { StoredEntry(offset: UInt32($0.lowerBound), length: UInt32($0.count)) }
    }

    /// The highest sequence number that may have been handed out: that of the id counter,
    /// of the expiry mark, or of any file in the outbox, read or not (a newer notifyd's
    /// entry is left in place, and a new entry must not take its name), whichever is higher.
    public func highestSequence() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        // A batch is named after its last (highest) member.
        let named = names.compactMap { name in
            let entry = name.hasPrefix(Self.batchPrefix) ? name.dropFirst(Self.batchPrefix.count) : name[...]
            return Int(entry.prefix { $0.isASCII && $0.isNumber })
        // A name past the ids notifyd hands out is not one it wrote, and cannot be taken by one.
        }.filter { $0 <= OutboxIDCounter.largestSequence }.max() ?? 0
        return max(named, ids.highest, expiryMark.sequencesThrough)
    }

    /// Throws when the id counter was written by a newer notifyd, which a start must not overwrite.
    public func refuseNewerFormat() throws(CoreError) {
        try ids.refuseNewerFormat()
        try expiryMark.refuseNewerFormat()
    }

    /// Records that `expired` expired at `now`. Those never tried, in one small file however
    /// many they are (`OutboxExpiryMark`), their records staying as they are, each still in
    /// its batch or its own file; the mark leaves out `beingTried`, the messages in flight
    /// as they expired, whose records say queued and never tried as well but which were
    /// not reported expired. Where the mark cannot say it (the clock is behind it) or could
    /// not be written, and for one tried, each record is read back and written again as
    /// expired. Returns what went wrong, to be logged.
    public func recordExpiry(of expired: [OutboxQueue.ExpiryInPlace], at now: Date, beingTried: Set<Int>) -> [String] {
        var problems: [String] = []
        var written = expired.filter(\.tried)
        // Not copied when none was tried: after a week offline, 100,000 may expire at once.
        let untried = written.isEmpty ? expired : expired.filter { !$0.tried }
        if !untried.isEmpty {
            do throws(CoreError) {
                if try !expiryMark.record(expiredAt: now, sequences: untried.map(\.sequence), beingTried: beingTried) { written += untried }
            } catch {
                problems.append("\(error.description); writing each expired message instead")
                written += untried
            }
        }
        for gone in written {
            switch read(gone.id, at: gone.stored) {
            case .success(var whole):
                whole.markExpired()
                do throws(CoreError) { try save(whole) } catch {
                    problems.append("\(error.description); message \(gone.id), reported expired, may be sent after a restart if the clock is set back")
                }
            case .failure(let problem):
                problems.append(problem.warning)
            }
        }
        return problems
    }

    /// Whether `entry`, as a start reads it back, is queued on disk, never tried, and
    /// expired before. (One tried is written whole when it expires; one in flight when the
    /// mark was written is left out of it, and a stop may have cut its attempt short.)
    public func expiredBefore(_ entry: LoadedEntry) -> Bool {
        entry.state == .queued && entry.untried && expiryMark.covers(sequence: entry.sequence, expiresAt: entry.expiresAt)
    }

    public func save(_ delivery: Delivery) throws(CoreError) {
        try AtomicFile.ensureDirectory(directory)
        try ids.cover(delivery.sequence)
        let data: Data
        do {
            data = try OutboxEntryRecord(delivery).stateFile()
        } catch {
            throw .storage("cannot encode an outbox entry: \(error)")
        }
        try AtomicFile.write(data, to: path(delivery.id) + ".json", using: calls)
        leaveBatch(delivery.id)
    }

    /// A batch member written to a file of its own leaves its batch, as one that was sent
    /// does (its id in the batch's `.done`): its file holds all of it now. Once every member
    /// has left, the batch goes: a batch whose messages all expired or failed is not kept
    /// on disk beside their own files, nor in memory (with each one's id) after a restart.
    private func leaveBatch(_ id: String) {
        guard let batch = batches.name(ofMember: id) else { return }
        // The line first, the index after: a member the index forgot without it would come
        // back from the batch's copy once its own file is removed. Without the line it stays
        // a member, its file removed with it, as before files made members leave.
        guard doneLogs.append(id, to: path(batch) + ".done") == nil else {
            batches.noteOwnFile(id)
            return
        }
        if case .finished(let name) = batches.remove(id).0 { forget(name) }
    }

    /// How many removal logs are open now.
    var openLogCount: Int { doneLogs.openCount }

    /// Lets the index sized for a burst go once the burst is over (see `EmptyStorage`).
    func releaseStorageIfEmpty() {
        batches.releaseStorageIfEmpty()
    }

    /// Not fsynced: a removal lost to a power cut sends the message again, which
    /// at-least-once delivery allows; the next save's directory fsync makes it durable.
    /// One removal at a time (on the outbox's writer thread): the index and the logs change together.
    public func remove(_ id: String) throws(CoreError) {
        if let failure = remove([id]).first { throw failure }
    }

    /// `remove` for several deliveries, in their order; returns what failed. The removals
    /// that go to one batch's log one after another are written to it with one `write`
    /// (a burst's deliveries leave in order, most of them members of the same batch): what
    /// is written is what one `remove` after another writes, and each line is written
    /// before anything a later delivery's removal does to the files.
    public func remove(_ ids: [String]) -> [CoreError] {
        var failures: [CoreError] = []
        var logged: (batch: String, ids: [String])?
        func writeLogged() {
            guard let (batch, ids) = logged else { return }
            logged = nil
            if let error = doneLogs.append(ids, to: path(batch) + ".done") {
                for id in ids { failures.append(.storage("cannot record that outbox entry \(id) was sent: \(String(cString: strerror(error)))")) }
            }
        }
        for id in ids {
            let (removal, ownFile) = batches.remove(id)
            // A batch member has a file of its own only when a start found one it could not
            // read (one written later makes it leave the batch), and looking for the file
            // costs a path lookup each.
            if ownFile {
                writeLogged()
                if calls.unlink(path(id) + ".json") != 0 && errno != ENOENT {
                    failures.append(.storage("cannot remove outbox entry \(id): \(String(cString: strerror(errno)))"))
                    continue
                }
            }
            switch removal {
            case .none:
                break
            case .finished(let batch):
                writeLogged()
                forget(batch)
            case .pending(let batch):
                if logged?.batch != batch {
                    writeLogged()
                    logged = (batch, [])
                }
                logged?.ids.append(id)
            }
        }
        writeLogged()
        return failures
    }

    private static let batchPrefix = "batch-"

    /// The batch first, then its log: a log without its batch is harmless (removed at load).
    private func forget(_ batch: String) {
        _ = calls.unlink(path(batch) + ".json")
        doneLogs.closeLog(path(batch) + ".done")
        _ = calls.unlink(path(batch) + ".done")
    }

    private func path(_ name: String) -> String {
        FilePath.join(directory, name)
    }
}
