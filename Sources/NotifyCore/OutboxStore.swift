import Foundation

/// The outbox on disk: `outbox/<id>.json`, one file per delivery, each written atomically
/// (and fsynced) before the sender hears "accepted", removed once the backend took it.
/// A crash at any moment leaves each delivery either absent (never accepted) or whole.
public struct OutboxStore: Sendable {
    public let directory: String

    public init(stateDirectory: String) {
        directory = (stateDirectory as NSString).appendingPathComponent("outbox")
    }

    /// Every delivery on disk, and warnings for files that could not be read (moved aside).
    public func load() -> ([Delivery], warnings: [String]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return ([], []) }
        var deliveries: [Delivery] = []
        var warnings: [String] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = (directory as NSString).appendingPathComponent(name)
            do {
                guard let data = FileManager.default.contents(atPath: path) else { throw UnreadableFile() }
                _ = try DiskFormat.checkVersion(of: data, supported: OutboxEntryRecord.currentVersion)
                deliveries.append(try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery())
            } catch let newer as DiskFormat.NewerFormat {
                // Left in place: the notifyd that wrote it can still send it.
                warnings.append("outbox entry \(path) was not read: \(newer)")
            } catch {
                let aside = path + ".unreadable"
                rename(path, aside)
                warnings.append("outbox entry \(path) could not be read; moved it to \(aside)")
            }
        }
        return (deliveries, warnings)
    }

    /// The highest sequence number any file in the outbox is named with, read or not (a
    /// newer notifyd's entry is left in place, and a new entry must not take its name).
    public func highestSequence() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { Int($0.prefix { $0.isASCII && $0.isNumber }) }.max() ?? 0
    }

    public func save(_ delivery: Delivery) throws(CoreError) {
        try AtomicFile.ensureDirectory(directory)
        let data: Data
        do {
            data = try JSONEncoder.state.encode(OutboxEntryRecord(delivery))
        } catch {
            throw .storage("cannot encode an outbox entry: \(error)")
        }
        try AtomicFile.write(data, to: path(delivery.id))
    }

    public func remove(_ id: String) throws(CoreError) {
        if unlink(path(id)) != 0 && errno != ENOENT {
            throw .storage("cannot remove outbox entry \(id): \(String(cString: strerror(errno)))")
        }
        AtomicFile.syncDirectory(directory)
    }

    private func path(_ id: String) -> String {
        (directory as NSString).appendingPathComponent(id + ".json")
    }
}
