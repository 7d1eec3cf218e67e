#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCoding
import NotifyProtocol

/// A request's `id` exactly as the client wrote it, echoed byte for byte in the reply:
/// an integer beyond 2^53, `1.0` or an escaped string come back as they went out, which
/// a trip through `JSONValue` (numbers as `Double`) would not promise.
struct RequestID: Sendable, Equatable {
    /// One JSON value, already checked by `JSONShape`.
    let json: [UInt8]

    init<Bytes: Collection<UInt8>>(json: Bytes) {
        self.json = Array(json)
    }

    /// The id of a request line: its raw text where `JSONShape` found it, else the
    /// decoder's copy re-encoded (an `"id"` key written with escapes).
    init?(line: [UInt8], shape: JSONShape.Shape, decoded: JSONValue?) {
        if let range = shape.idRange {
            json = Array(line[range])
        } else if let decoded, let encoded = try? WireCoding.encoder().encode(decoded) {
            json = Array(encoded)
        } else {
            return nil
        }
    }
}
