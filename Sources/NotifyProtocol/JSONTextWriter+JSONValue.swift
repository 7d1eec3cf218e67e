/// Any `JSONValue` written as `WireCoding.encoder()` writes it: keys sorted as Swift sorts
/// strings, whole numbers without a fraction, others as Swift prints a `Double` (`2.5`,
/// `1e-05`). Together with `JSONValueEncoder`, how notifyctl writes its requests and what
/// `--json` prints, without Foundation's coders (see `JSONValueEncoder`).
extension JSONTextWriter {
    /// `value` as one line of compact JSON text, slashes unescaped, newline excluded.
    public static func line(_ value: JSONValue) -> [UInt8] {
        var writer = JSONTextWriter(pretty: false, escapingSlashes: false)
        writer.value(value)
        return writer.bytes
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .bool(let flag):
            bool(flag)
        case .number(let number):
            self.number(number)
        case .string(let text):
            string(text)
        case .array(let elements):
            beginArray()
            for element in elements {
                nextElement()
                self.value(element)
            }
            endArray()
        case .object(let members):
            beginObject()
            for key in members.keys.sorted() {
                self.key(key)
                self.value(members[key] ?? .null)
            }
            endObject()
        }
    }

    /// A number as the encoder writes a `Double`: its description, less a trailing `.0`.
    public mutating func number(_ number: Double) {
        guard number.isFinite else {
            // The encoder refuses these; JSONValue never holds one read from a line.
            bytes.append(contentsOf: "null".utf8)
            return
        }
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }
}
