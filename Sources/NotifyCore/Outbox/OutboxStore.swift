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
import NotifyProtocol

/// The outbox on disk: `outbox/<id>.json`, one file per delivery, each written atomically
/// (and fsynced) before the sender hears "accepted", removed once the backend took it.
/// A crash at any moment leaves each delivery either absent (never accepted) or whole.
///
/// Deliveries accepted together (a burst of pipelined sends) are written as one
/// `batch-<last id>.json`, so a burst costs one file and two fsyncs instead of a file and
/// two fsyncs each. A batch member that changes later gets its own `<id>.json`, which wins
/// over the batch's copy; one that leaves is appended to the batch's `.done` log, and the
/// batch goes once all its members have.
public struct OutboxStore: Sendable {
    public let directory: String
    private let calls: FileSystemCalls
    private let batches = BatchIndex()
    private let doneLogs: AppendLogs
    private let ids: OutboxIDCounter
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
    }

    /// Every delivery on disk, and warnings for files that could not be read (moved aside).
    public func load() -> ([Delivery], warnings: [String]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return ([], []) }
        var single: [String: Delivery] = [:]
        var batched: [String: [Delivery]] = [:]
        var warnings: [String] = []
        if let warning = ids.load() { warnings.append(warning) }
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = FilePath.join(directory, name)
            do {
                let data = try FileContents.load(path, limit: Self.largestFile)
                _ = try DiskFormat.checkVersion(of: data, supported: OutboxEntryRecord.currentVersion)
                if name.hasPrefix(Self.batchPrefix) {
                    let record = try JSONDecoder.decodeStateFile(OutboxBatchRecord.self, from: data)
                    batched[String(name.dropLast(".json".count))] = try record.entries.map { try $0.delivery() }
                } else {
                    let delivery = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
                    single[delivery.id] = delivery
                }
            } catch let newer as DiskFormat.NewerFormat {
                // Left in place: the notifyd that wrote it can still send it.
                warnings.append("outbox entry \(path) was not read: \(newer)")
            } catch {
                let aside = path + ".unreadable"
                rename(path, aside)
                let reason = (error as? FileContents.Problem).map { " (\($0))" } ?? ""
                warnings.append("outbox entry \(path) could not be read\(reason); moved it to \(aside)")
            }
        }
        // Looked up once per batch and per member: a list would make a large outbox slow to load.
        let present = Set(names)
        for name in names where name.hasPrefix(Self.batchPrefix) && name.hasSuffix(".done") {
            let batch = String(name.dropLast(".done".count))
            // Its batch was finished (or moved aside): the log has nothing left to say.
            if batched[batch] == nil && !present.contains(batch + ".json") { unlink(path(name)) }
        }
        var deliveries = Array(single.values)
        for (batch, members) in batched {
            let done = Set(((try? String(contentsOfFile: path(batch) + ".done", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init))
            let pending = members.filter { !done.contains($0.id) }
            if pending.isEmpty {
                forget(batch)
                continue
            }
            // A member with a file of its own, read or not, has it removed with it.
            let ids = pending.map(\.id)
            batches.add(batch, ids: ids, withOwnFiles: Set(ids.filter { present.contains($0 + ".json") }))
            deliveries += pending.filter { single[$0.id] == nil }
        }
        deliveries.sort { ($0.sequence, $0.id) < ($1.sequence, $1.id) }
        return (deliveries, warnings)
    }

    /// Persists deliveries accepted together, with one file when there are several.
    public func save(batch deliveries: [Delivery]) throws(CoreError) {
        guard let last = deliveries.last else { return }
        guard deliveries.count > 1 else { return try save(last) }
        try AtomicFile.ensureDirectory(directory)
        try ids.cover(deliveries.map(\.sequence).max() ?? 0)
        let data: Data
        do {
            data = try OutboxBatchRecord(deliveries).stateFile()
        } catch {
            throw .storage("cannot encode outbox entries: \(error)")
        }
        let batch = Self.batchPrefix + last.id
        try AtomicFile.write(data, to: path(batch) + ".json", using: calls)
        batches.add(batch, ids: deliveries.map(\.id), withOwnFiles: [])
    }

    /// The highest sequence number that may have been handed out: that of the id counter,
    /// or of any file in the outbox, read or not (a newer notifyd's entry is left in place,
    /// and a new entry must not take its name), whichever is higher.
    public func highestSequence() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        // A batch is named after its last (highest) member.
        let named = names.compactMap { name in
            let entry = name.hasPrefix(Self.batchPrefix) ? name.dropFirst(Self.batchPrefix.count) : name[...]
            return Int(entry.prefix { $0.isASCII && $0.isNumber })
        // A name past the ids notifyd hands out is not one it wrote, and cannot be taken by one.
        }.filter { $0 <= OutboxIDCounter.largestSequence }.max() ?? 0
        return max(named, ids.highest)
    }

    /// Throws when the id counter was written by a newer notifyd, which a start must not overwrite.
    public func refuseNewerFormat() throws(CoreError) {
        try ids.refuseNewerFormat()
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
        batches.noteOwnFile(delivery.id)
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
            // A batch member has a file of its own only once it changed after the batch was
            // written; most never do, and looking for the file costs a path lookup each.
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

/// A batch file as written on disk: the entries' own records, under one format version.
struct OutboxBatchRecord: Codable {
    var version: Int?
    var entries: [OutboxEntryRecord]

    init(_ deliveries: [Delivery]) {
        version = OutboxEntryRecord.currentVersion
        entries = deliveries.map(OutboxEntryRecord.init)
    }

    /// The file as `JSONEncoder.state` writes it, written without the encoder: a burst's
    /// batch is written once per message it holds (see `JSONTextWriter`).
    func stateFile() throws -> Data {
        let size = entries.reduce(64) { $0 + 64 + OutboxEntryRecord.textSize($1.message) }
        var json = JSONTextWriter(pretty: true, escapingSlashes: true, capacity: size)
        json.beginObject()
        json.key("entries")
        json.beginArray()
        for entry in entries {
            json.nextElement()
            guard entry.write(to: &json) else { return try JSONEncoder.state.encode(self) }
        }
        json.endArray()
        if let version {
            json.key("version")
            json.int(version)
        }
        json.endObject()
        return Data(json.bytes)
    }
}

/// Which batch file each delivery still pending in one lives in, and which of them have a
/// file of their own besides.
private final class BatchIndex: Sendable {
    enum Removal { case none, pending(String), finished(String) }

    private struct State {
        var batchOf: [String: String] = [:]
        var pending: [String: Set<String>] = [:]
        var withOwnFile: Set<String> = []
    }
    private let state = Mutex(State())

    func add(_ batch: String, ids: [String], withOwnFiles: Set<String>) {
        state.withLock { state in
            state.pending[batch] = Set(ids)
            for id in ids { state.batchOf[id] = batch }
            state.withOwnFile.formUnion(withOwnFiles)
        }
    }

    /// A batch member was written to a file of its own.
    func noteOwnFile(_ id: String) {
        state.withLock { state in
            if state.batchOf[id] != nil { state.withOwnFile.insert(id) }
        }
    }

    /// Where `id` was, and whether it may have a file of its own (always, outside a batch).
    func remove(_ id: String) -> (Removal, ownFile: Bool) {
        state.withLock { state in
            guard let batch = state.batchOf.removeValue(forKey: id) else { return (.none, true) }
            let ownFile = state.withOwnFile.remove(id) != nil
            state.pending[batch]?.remove(id)
            guard state.pending[batch]?.isEmpty ?? true else { return (.pending(batch), ownFile) }
            state.pending[batch] = nil
            return (.finished(batch), ownFile)
        }
    }

    func releaseStorageIfEmpty() {
        state.withLock { state in
            state.batchOf.releaseStorageIfEmpty()
            state.pending.releaseStorageIfEmpty()
            state.withOwnFile.releaseStorageIfEmpty()
        }
    }
}
