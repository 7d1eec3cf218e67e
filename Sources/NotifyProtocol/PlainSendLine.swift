/// A `send` request line read without `JSONDecoder`, when it is written plainly: the
/// command of a burst, read once per message, where the decoder spent some 28k
/// instructions on the header and as many again on the command.
///
/// Plainly means: one object whose keys are plain words (no escapes), each of the
/// command's keys once, and whose values are strings without escapes, `true`, `false`,
/// `null`, numbers, or lists of such strings. Anything else (an escape, a nested object,
/// a key twice, a value of the wrong type, a missing field) is left to the decoder, which
/// reads it the same way or words the error.
extension SendCommand {
    /// The command of `line`, which must have passed `JSONShape.check`, read as the
    /// decoder reads it (keys it does not know ignored, `null` an absent option); nil for
    /// a line not written plainly.
    public init?(plainLine line: [UInt8]) {
        guard let command = line.withUnsafeBufferPointer({ bytes -> SendCommand? in
            var reader = PlainObjectReader(bytes: bytes)
            return reader.sendCommand()
        }) else { return nil }
        self = command
    }
}

private struct PlainObjectReader: JSONByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    enum Value {
        case string(Range<Int>)
        case strings([Range<Int>])
        case number(Range<Int>)
        case bool(Bool)
        case null
    }

    mutating func sendCommand() -> SendCommand? {
        var to: String?, message: String?
        var pns: [String]?, wait: Bool?, queue: Bool?, timeout: Double?
        // The command's keys and the header's, each allowed once.
        var seen: UInt8 = 0
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return nil }
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return nil }
        while true {
            guard let key = plainString() else { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            guard let value = value() else { return nil }
            let name = text(key)
            let bit: UInt8
            switch name {
            case "to":
                guard case .string(let range) = value else { return nil }
                to = text(range)
                bit = 1
            case "message":
                guard case .string(let range) = value else { return nil }
                message = text(range)
                bit = 2
            case "pns":
                switch value {
                case .strings(let ranges): pns = ranges.map(text)
                case .null: pns = nil
                default: return nil
                }
                bit = 4
            case "wait", "queue":
                switch value {
                case .bool(let flag): if name == "wait" { wait = flag } else { queue = flag }
                case .null: break
                default: return nil
                }
                bit = name == "wait" ? 8 : 16
            case "timeout":
                switch value {
                case .number(let range):
                    guard let seconds = plainJSONNumber(UnsafeBufferPointer(rebasing: bytes[range])) else { return nil }
                    timeout = seconds
                case .null: timeout = nil
                default: return nil
                }
                bit = 32
            case "tags", "action", "silent":
                // An installations request: rare, and left to the decoder.
                return nil
            case "id":
                bit = 64
            case "cmd":
                bit = 128
            default:
                // Not the command's: the decoder ignores it, whatever it holds.
                bit = 0
            }
            guard seen & bit == 0 else { return nil }
            seen |= bit
            skipWhitespace()
            if take(UInt8(ascii: ",")) {
                skipWhitespace()
                continue
            }
            guard take(UInt8(ascii: "}")) else { return nil }
            break
        }
        skipWhitespace()
        guard position == bytes.count, let to, let message else { return nil }
        return SendCommand(to: to, message: message, pns: pns, wait: wait, queue: queue, timeout: timeout)
    }

    /// Skipped past an unknown key's value too: its `,` or `}` is handled in the loop.
    private mutating func value() -> Value? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return plainString().map(Value.string)
        case UInt8(ascii: "["):
            position += 1
            skipWhitespace()
            var strings: [Range<Int>] = []
            if take(UInt8(ascii: "]")) { return .strings(strings) }
            while true {
                guard let string = plainString() else { return nil }
                strings.append(string)
                skipWhitespace()
                if take(UInt8(ascii: "]")) { return .strings(strings) }
                guard take(UInt8(ascii: ",")) else { return nil }
                skipWhitespace()
            }
        case UInt8(ascii: "t"):
            position += 4
            return .bool(true)
        case UInt8(ascii: "f"):
            position += 5
            return .bool(false)
        case UInt8(ascii: "n"):
            position += 4
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(numberBytes())
        default:
            return nil
        }
    }

    /// The inside of a string without escapes; nil at anything else.
    private mutating func plainString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""):
                position += 1
                return start..<(position - 1)
            case UInt8(ascii: "\\"):
                return nil
            default:
                position += 1
            }
        }
        return nil
    }

    /// Valid UTF-8: the line passed `JSONShape.check`.
    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}

extension SendCommand {
    /// Written plainly, as the daemon reads it without the decoder; nil for a timeout with
    /// a fraction, and for an installations request (tags, action, silent, or no `to`),
    /// which `JSONValueEncoder` writes as the encoder does.
    public func plainRequestLine(id: Int) -> [UInt8]? {
        guard let to, tags == nil, action == nil, silent == nil else { return nil }
        var json = JSONTextWriter(pretty: false, escapingSlashes: false, capacity: 96 + message.utf8.count + to.utf8.count)
        json.beginObject()
        json.key("cmd")
        json.string(Self.name)
        json.key("id")
        json.int(id)
        json.key("message")
        json.string(message)
        if let pns {
            json.key("pns")
            json.beginArray()
            for name in pns {
                json.nextElement()
                json.string(name)
            }
            json.endArray()
        }
        if let queue {
            json.key("queue")
            json.bool(queue)
        }
        if let timeout {
            guard timeout >= 0, timeout.sign == .plus, timeout < 1e15, let seconds = Int(exactly: timeout) else { return nil }
            json.key("timeout")
            json.int(seconds)
        }
        json.key("to")
        json.string(to)
        if let wait {
            json.key("wait")
            json.bool(wait)
        }
        json.endObject()
        return json.bytes
    }

    public static func result(json: JSONValue) -> SendResult? {
        SendResult(json: json)
    }
}
