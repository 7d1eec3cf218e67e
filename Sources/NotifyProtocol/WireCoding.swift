#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one place that decides how protocol values look on the wire: compact JSON,
/// ISO 8601 dates, keys exactly as the types name them (snake_case by CodingKeys).
public enum WireCoding {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        // Sorted keys make lines stable for people reading `socat` output and for golden tests.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = WireDate.parse(text) ?? (try? Date(text, strategy: Date.ISO8601FormatStyle())) { return date }
            // The words of the `.iso8601` strategy this replaces.
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected date string to be ISO8601-formatted.")
        }
        return decoder
    }

    /// One protocol line: the JSON text followed by a newline.
    public static func line<T: Encodable>(_ value: T) throws -> Data {
        var data = try encoder().encode(value)
        data.append(0x0A)
        return data
    }

    /// Longest request line the daemon accepts, newline excluded. Large enough for any
    /// message the backends can carry (a WNS toast tops out at 5 KB) with room for
    /// escaping; small enough that a runaway client cannot make the daemon buffer much.
    public static let maximumLineLength = 256 * 1024
}
