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

    let path: String
    private let calls: FileSystemCalls
    /// What the file says, once read.
    private let reserved = Mutex<Int?>(nil)

    init(path: String, calls: FileSystemCalls = .system) {
        self.path = path
        self.calls = calls
    }

    /// Reads the mark, and says why when the file could not be used (then ids continue
    /// after the highest found in the outbox).
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
            let data: Data
            do {
                data = try JSONEncoder.state.encode(Record(version: Record.currentVersion, reservedThrough: mark))
            } catch {
                throw .storage("cannot encode the outbox id counter: \(error)")
            }
            try AtomicFile.write(data, to: path, using: calls)
            value = mark
        }
    }

    func refuseNewerFormat() throws(CoreError) {
        try DiskFormat.refuseNewer(path, supported: Record.currentVersion, limit: Self.largestFile)
    }

    private func read() -> (mark: Int, warning: String?) {
        do {
            let data = try FileContents.load(path, limit: Self.largestFile)
            _ = try DiskFormat.checkVersion(of: data, supported: Record.currentVersion)
            let mark = try JSONDecoder.decodeStateFile(Record.self, from: data).reservedThrough
            guard (0...Self.largestSequence).contains(mark) else {
                throw DiskFormat.OutOfRange(description: "it holds \(mark), not an id number notifyd hands out (0 to \(Self.largestSequence))")
            }
            return (mark, nil)
        } catch FileContents.Problem.missing {
            return (0, nil)
        } catch let newer as DiskFormat.NewerFormat {
            // Left for the notifyd that wrote it; a daemon does not start over it.
            return (0, "outbox id counter \(path) was not read: \(newer)")
        } catch {
            let aside = path + ".unreadable"
            rename(path, aside)
            let reason = (error as? FileContents.Problem).map { " (\($0))" } ?? (error as? DiskFormat.OutOfRange).map { " (\($0))" } ?? ""
            return (0, "outbox id counter \(path) could not be read\(reason); moved it to \(aside). New ids continue after the highest in the outbox, and may repeat the id of a message already delivered")
        }
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
