extension StringProtocol {
    /// The text with every control, format and line-separator character written as an
    /// escape (`\n`, `\t`, `\x00`, `\x1B`, `\u{202E}`), for text from a file that goes into
    /// an error: a NUL, an escape sequence or a right-to-left override in it must not reach
    /// the terminal or the journal as itself, cut a line in two, or reorder what follows.
    public func escapingControlCharacters() -> String {
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where !Self.isShownAsItself(scalar):
                result += scalar.value < 0x80
                    ? "\\x" + hexDigits(scalar.value, width: 2)
                    : "\\u{" + hexDigits(scalar.value, width: 1) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isShownAsItself(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: false
        default: true
        }
    }
}

private func hexDigits(_ value: UInt32, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
