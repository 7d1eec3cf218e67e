#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Foundation's coders as the wire wants them, for notifyd and the tests. Not for
/// notifyctl: linking them (and the `Data` they work in) costs every start of a
/// short-lived program a quarter of a millisecond of relocations.
extension WireCoding {
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

    /// Decodes bytes that passed `JSONShape.check`; the one way untrusted JSON is decoded.
    public static func decodeChecked<T: Decodable, Bytes: Collection<UInt8>>(_ type: T.Type, from bytes: Bytes, decoder: JSONDecoder = WireCoding.decoder()) throws -> T {
        try JSONShape.check(bytes)
        return try decoder.decode(type, from: Data(bytes))
    }
}
