import NotifyCoding
import Foundation
import NotifyProtocol

/// Encoding and parsing helpers for golden-JSON tests.
enum WireText {
    /// The exact text the protocol encoder writes (keys sorted, slashes unescaped).
    static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try WireCoding.encoder().encode(value), as: UTF8.self)
    }

    /// A JSON text as a tree, for comparisons that must not depend on key order.
    static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try WireCoding.decoder().decode(type, from: Data(text.utf8))
    }

    /// A fixed instant with whole seconds, since ISO 8601 on the wire carries no fraction.
    static func date(_ iso: String) throws -> Date {
        try Date(iso, strategy: .iso8601)
    }
}
