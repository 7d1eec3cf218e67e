#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JSON text written byte for byte as Foundation's `JSONEncoder` writes it with
/// `.sortedKeys` (the caller gives each object's keys in that order), compact or
/// `.prettyPrinted`, slashes escaped or not (`.withoutEscapingSlashes`), and dates in the
/// `.iso8601` strategy. For the values written once per message (a send's reply, an
/// outbox file): the encoder spends tens of thousands of instructions on each, most of
/// them boxing and unboxing its containers.
///
/// Strings as the encoder writes them: `"` and `\` escaped, `\b \t \n \f \r` for those
/// control characters and `\u00xx` (lower-case hex) for the others, `/` as `\/` unless
/// told otherwise, everything else (DEL, U+2028, emoji) as it is.
public struct JSONTextWriter {
    public internal(set) var bytes: [UInt8] = []
    private let pretty: Bool
    private let escapingSlashes: Bool
    private var depth = 0
    /// The object or array being written has no member yet.
    private var empty = true

    public init(pretty: Bool, escapingSlashes: Bool, capacity: Int = 256) {
        self.pretty = pretty
        self.escapingSlashes = escapingSlashes
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// The next member's key, which must come after the one before it in sorted order
    /// and need no escaping (the keys of our types are plain ASCII words).
    public mutating func key(_ name: StaticString) {
        nextMember()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        separateKey()
    }

    private mutating func separateKey() {
        if pretty { bytes.append(UInt8(ascii: " ")) }
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
    }

    /// The next member's key, in sorted order like `key(_: StaticString)`, escaped as any
    /// string (a dictionary's keys are the user's text).
    public mutating func key(_ name: String) {
        nextMember()
        string(name)
        separateKey()
    }

    /// Before each element of an array.
    public mutating func nextElement() {
        nextMember()
    }

    /// An array of strings.
    public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values {
            nextElement()
            string(value)
        }
        endArray()
    }

    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            // Most text has nothing to escape: looked for first, then copied at once.
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || (escapingSlashes && $0 == UInt8(ascii: "/")) }) {
                bytes.append(contentsOf: utf8)
                return
            }
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (byte == UInt8(ascii: "/") && escapingSlashes) else { continue }
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                }
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    public mutating func bool(_ value: Bool) {
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    /// The date as `.iso8601` writes it (`"2026-11-22T08:22:24Z"`, whole seconds rounded
    /// down); false, with nothing written, for one before 1970 or after 9999, which is left
    /// to the encoder (its calendar and this arithmetic part ways far enough back).
    public mutating func date(_ date: Date) -> Bool {
        let start = bytes.count
        bytes.append(UInt8(ascii: "\""))
        guard WireDate.append(date, to: &bytes) else {
            bytes.removeSubrange(start...)
            return false
        }
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    private mutating func open(_ bracket: UInt8) {
        bytes.append(bracket)
        depth += 1
        empty = true
    }

    private mutating func close(_ bracket: UInt8) {
        depth -= 1
        if pretty {
            // An empty one as the encoder writes it: a blank line inside.
            if empty { bytes.append(UInt8(ascii: "\n")) }
            newline()
        }
        bytes.append(bracket)
        empty = false
    }

    private mutating func nextMember() {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        if pretty { newline() }
    }

    private mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        var indent = 2 * depth
        while indent > 0 {
            let run = min(indent, Self.spaces.count)
            bytes.append(contentsOf: Self.spaces[0..<run])
            indent -= run
        }
    }

    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 32)
}
