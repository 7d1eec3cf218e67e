/// What the readers of JSON text that skip the decoder share (`PlainSendLine`'s reader of
/// a send request, `JSONValue(parsing:)`): a position in the bytes, and steps over them.
protocol JSONByteReader {
    var bytes: UnsafeBufferPointer<UInt8> { get }
    var position: Int { get set }
}

extension JSONByteReader {
    mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    mutating func skipWhitespace() {
        while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x0A || bytes[position] == 0x0D || bytes[position] == 0x09 {
            position += 1
        }
    }

    /// Past a number's bytes, as far as they go; its range.
    mutating func numberBytes() -> Range<Int> {
        let start = position
        while position < bytes.count, Self.isNumberByte(bytes[position]) { position += 1 }
        return start..<position
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    }
}
