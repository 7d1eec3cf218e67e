#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// A batch file as written on disk: the entries' own records, under one format version.
struct OutboxBatchRecord: Codable {
    var version: Int?
    var entries: [OutboxEntryRecord]

    init(_ deliveries: [Delivery]) {
        version = OutboxEntryRecord.currentVersion
        entries = deliveries.map(OutboxEntryRecord.init)
    }

    /// `stateFile`, and the byte range of each entry in it.
    func stateFileWithRanges() throws -> (Data, [Range<Int>]) {
        let data = try stateFile()
        let ranges = try data.withUnsafeBytes { try BatchEntryRanges.find(in: $0) }
        guard ranges.count == entries.count else { throw BatchEntryRanges.Malformed() }
        return (data, ranges)
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
