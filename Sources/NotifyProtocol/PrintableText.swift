/// Text another program chose (the backend, whatever listens on or connects to the socket)
/// made safe to print on a terminal or to write as a log line. Its control characters could
/// otherwise move the cursor, clear the screen or retitle the terminal (ESC and C1
/// sequences), or start a line that looks like one of ours (a newline, a carriage return).
/// Each is written as the JSON escape that names it (`\n`, `\u001B`), which a person can
/// read and which keeps JSON text valid JSON, meaning the same.
public enum PrintableText {
    /// C0, DEL and C1 (Unicode Cc), the line and paragraph separators, and the
    /// bidirectional marks, overrides and isolates, which make a line show other than it
    /// reads. Other format characters (the zero-width joiner of emoji sequences) are shown.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` on one line, every control character escaped.
    public static func line(_ text: String) -> String {
        escaping(text) { isControl($0) }
    }

    /// Text made of lines (ours, with a field from elsewhere in it): kept apart at its
    /// newlines, every other control character escaped.
    public static func lines(_ text: String) -> String {
        escaping(text) { $0 != "\n" && isControl($0) }
    }

    /// One line of JSON text (from an encoder, or checked as JSON): the white space between
    /// its tokens becomes spaces, and the control characters in its strings, which JSON lets
    /// through unescaped (DEL, C1, the separators), become `\u` escapes.
    public static func jsonLine(_ text: String) -> String {
        guard needsEscaping(text, isControl) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 {
                result.append(" ")
            } else if isControl(scalar) {
                result.append(contentsOf: escape(scalar).unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    private static func escaping(_ text: String, _ escaped: (Unicode.Scalar) -> Bool) -> String {
        guard needsEscaping(text, escaped) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if escaped(scalar) {
                result.append(contentsOf: escape(scalar).unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Most text is printable ASCII, and is passed on without a copy.
    private static func needsEscaping(_ text: String, _ escaped: (Unicode.Scalar) -> Bool) -> Bool {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return false }
        return text.unicodeScalars.contains(where: escaped)
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }
}
