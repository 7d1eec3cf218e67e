/// A line read into a `JSONValue` without Foundation's `JSONDecoder`: how notifyctl reads
/// the daemon's replies (`JSONValueDecoder` then reads its types from the value). The
/// decoder's first use in a process costs about a million instructions, most of them the
/// Swift runtime looking up its types' conformances, and linking it a quarter of a
/// millisecond of relocations at every start (see `JSONValueEncoder`).
extension JSONValue {
    /// The value of `line`, which must have passed `JSONShape.check`, as the decoder reads
    /// it into a `JSONValue`; nil for what notifyd never writes and the decoder might read
    /// another way: a key repeated in an object, a number that is zero with an exponent or
    /// that a `Double` cannot hold, an escaped surrogate that is not half of a pair.
    public init?(parsing line: [UInt8]) {
        guard let value = line.withUnsafeBufferPointer({ bytes -> JSONValue? in
            var parser = JSONValueParser(bytes: bytes)
            return parser.document()
        }) else { return nil }
        self = value
    }
}

/// A number's text as the decoder reads it into a `Double`; nil where the decoder might not:
/// it refuses a number that underflows to zero (1e-400, or 0. and 400 zeros and a 1) and
/// some zeros with an exponent (0e3), so no zero with an exponent is read here either.
func plainJSONNumber(_ digits: UnsafeBufferPointer<UInt8>) -> Double? {
    let exponent = digits.contains { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    guard let value = Double(String(decoding: digits, as: UTF8.self)), value.isFinite,
          value != 0 || (!exponent && !digits.contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") })) else { return nil }
    return value
}

private struct JSONValueParser: JSONByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    mutating func document() -> JSONValue? {
        skipWhitespace()
        guard let value = value() else { return nil }
        skipWhitespace()
        return position == bytes.count ? value : nil
    }

    /// The check bounds the nesting, so the recursion stays shallow.
    private mutating func value() -> JSONValue? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return .object(members) }
            while true {
                guard let key = string() else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                // Which of a repeated key's values the decoder keeps depends on what it
                // decodes (a dictionary keeps the first): left to it.
                guard let member = value(), members.updateValue(member, forKey: key) == nil else { return nil }
                skipWhitespace()
                if take(UInt8(ascii: "}")) { return .object(members) }
                guard take(UInt8(ascii: ",")) else { return nil }
                skipWhitespace()
            }
        case UInt8(ascii: "["):
            position += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return .array(elements) }
            while true {
                guard let element = value() else { return nil }
                elements.append(element)
                skipWhitespace()
                if take(UInt8(ascii: "]")) { return .array(elements) }
                guard take(UInt8(ascii: ",")) else { return nil }
                skipWhitespace()
            }
        case UInt8(ascii: "\""):
            return string().map(JSONValue.string)
        case UInt8(ascii: "t"):
            return word("true") ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return word("false") ? .bool(false) : nil
        case UInt8(ascii: "n"):
            return word("null") ? .null : nil
        default:
            let digits = numberBytes()
            guard !digits.isEmpty else { return nil }
            return plainJSONNumber(UnsafeBufferPointer(rebasing: bytes[digits])).map(JSONValue.number)
        }
    }

    /// A string, its escapes undone; the check has seen that they and the UTF-8 are valid.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\") {
            position += 1
        }
        guard position < bytes.count else { return nil }
        if bytes[position] == UInt8(ascii: "\"") {
            position += 1
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<(position - 1)]), as: UTF8.self)
        }
        var text = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    text.append(contentsOf: String(Character(scalar)).utf8)
                default: text.append(escape)  // " \ /
                }
            default:
                text.append(byte)
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (its `\u` taken), joined with the low half that must follow
    /// a high surrogate; nil for a surrogate on its own.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let unit = hexUnit() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hexUnit(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    private mutating func hexUnit() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var unit: UInt32 = 0
        for byte in bytes[position..<(position + 4)] {
            guard let digit = Self.hexDigit(byte) else { return nil }
            unit = unit << 4 | digit
        }
        position += 4
        return unit
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    private mutating func word(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[position + offset] != text.utf8Start[offset] { return false }
        position += count
        return true
    }
}
