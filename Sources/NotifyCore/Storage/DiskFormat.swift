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

    /// Reads the file's `version` (1 when absent: files from before it was recorded) and
    /// refuses one newer than `supported`.
    static func checkVersion(of data: Data, supported: Int) throws -> Int {
        let version = try JSONDecoder.decodeStateFile(Header.self, from: data).version ?? 1
        guard version <= supported else { throw NewerFormat(version: version, supported: supported) }
        return version
    }

    /// A file in a format this notifyd does not know.
    struct NewerFormat: Error, CustomStringConvertible {
        var version: Int
        var supported: Int

        var description: String {
            "it was written by a newer notifyd (format \(version); this one reads formats up to \(supported))"
        }
    }
}
