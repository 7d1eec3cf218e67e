#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every file notifyd writes carries a format `version`, so that a file written by a newer
/// notifyd is refused with a message instead of being read as something it is not.
enum DiskFormat {
    private struct Header: Decodable {
        var version: Int?
    }

    /// A number in a file that no notifyd writes there: the file is damaged, and handled
    /// as one that cannot be read. The description says which number, for the warning.
    struct OutOfRange: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads the file's `version` (1 when absent: files from before it was recorded) and
    /// refuses one newer than `supported`.
    static func checkVersion(of data: Data, supported: Int) throws -> Int {
        try check(version: JSONDecoder.decodeStateFile(Header.self, from: data).version, supported: supported)
    }

    /// `checkVersion` for a version already read (nil: absent).
    @discardableResult
    static func check(version: Int?, supported: Int) throws -> Int {
        let version = version ?? 1
        guard version <= supported else { throw NewerFormat(version: version, supported: supported) }
        // No notifyd wrote a version below 1: the file is damaged.
        guard version >= 1 else { throw OutOfRange(description: "its format version \(version) is not one notifyd writes") }
        return version
    }

    /// Refuses a file a newer notifyd wrote, before this one starts and overwrites it with
    /// what it knows of. A file that is missing or cannot be read is left to its store's
    /// `load`, which reports it.
    static func refuseNewer(_ path: String, supported: Int, limit: Int) throws(CoreError) {
        guard let data = try? FileContents.load(path, limit: limit) else { return }
        do {
            _ = try checkVersion(of: data, supported: supported)
        } catch let newer as NewerFormat {
            throw .storage("\(path) was \(newer.writtenBy); refusing to overwrite it. Run that newer notifyd, or move the file away to start without it")
        } catch {
            return
        }
    }

    /// A file in a format this notifyd does not know.
    struct NewerFormat: Error, CustomStringConvertible {
        var version: Int
        var supported: Int

        var description: String { "it was " + writtenBy }

        var writtenBy: String {
            "written by a newer notifyd (format \(version); this one reads formats up to \(supported))"
        }
    }
}
