#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A strict, allocation-free check that bytes are one well-formed JSON value of bounded
/// nesting, run before anything reaches Foundation's `JSONDecoder`.
///
/// Why: `JSONDecoder` traps on some malformed inputs while building its error message
/// (seen: exactly 513 nested `[` at the end of the input crashes it inside
/// `JSONError.SourceLocation`), and deep nesting costs it time out of all proportion to
/// the input's size. Input that passes this check is syntactically valid, so the decoder
/// only ever reports type mismatches, a path that does not inspect the source text.
/// Socket lines and backend replies both go through here.
public enum JSONShape {
    /// Deeper than any request, reply or state file of ours needs; far below
    /// Foundation's own limit of 512.
    public static let maximumDepth = 32

    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// Byte offset of the first byte that cannot be part of valid JSON.
        public let offset: Int
        public let reason: String
        public var description: String { "\(reason) at byte \(offset + 1)" }

        public init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
    }

    /// What the check saw on its way, for free.
    public struct Shape: Sendable, Equatable {
        /// Where the value of the top-level object's `"id"` member is, as offsets into the
        /// bytes: a request's id, to be echoed exactly as the client wrote it (an integer
        /// beyond 2^53 would not survive a trip through `Double`). The last one when the
        /// key is repeated, as the decoder does; nil when there is none.
        public var idRange: Range<Int>?
        /// The same for `"cmd"`, so that a command that needs no decoding (`ping`) can be
        /// recognised without a decoder.
        public var cmdRange: Range<Int>?
    }

    /// Throws the first problem found: a syntax error, nesting deeper than
    /// `maximumDepth`, or bytes after the value (whitespace aside).
    @discardableResult
    public static func check<Bytes: Collection<UInt8>>(_ bytes: Bytes, maximumDepth: Int = JSONShape.maximumDepth) throws(Problem) -> Shape {
        var shape: Shape?, problem: Problem?
        _ = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(Problem) { shape = try scan(buffer, maximumDepth: maximumDepth) } catch { problem = error }
        }
        if let problem { throw problem }
        if let shape { return shape }
        // Bytes without contiguous storage are scanned from a copy.
        return try check(Array(bytes), maximumDepth: maximumDepth)
    }

    /// `check` for the lines the socket reads, without a copy. Specialised for them: the
    /// generic path makes the Swift runtime look up the conformances of its types on first
    /// use (150,000 instructions, a tenth of a `notifyctl send`).
    @discardableResult
    public static func check(_ bytes: [UInt8], maximumDepth: Int = JSONShape.maximumDepth) throws(Problem) -> Shape {
        try bytes.withUnsafeBufferPointer { buffer throws(Problem) in try scan(buffer, maximumDepth: maximumDepth) }
    }

    private static func scan(_ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int) throws(Problem) -> Shape {
        var scanner = Scanner(buffer, maximumDepth: maximumDepth)
        try scanner.checkDocument()
        return Shape(idRange: scanner.idRange, cmdRange: scanner.cmdRange)
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let maximumDepth: Int
        var position = 0
        var idRange: Range<Int>?
        var cmdRange: Range<Int>?

        init(_ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
        }

        mutating func checkDocument() throws(Problem) {
            skipWhitespace()
            try value(depth: 0)
            skipWhitespace()
            if position < bytes.count { throw problem("unexpected text after the JSON value") }
        }

        private func problem(_ reason: String) -> Problem {
            Problem(offset: position, reason: position >= bytes.count ? "unexpected end of input" : reason)
        }

        private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        private mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        }

        private mutating func expect(_ byte: UInt8, _ what: String) throws(Problem) {
            guard current == byte else { throw problem("expected \(what)") }
            position += 1
        }

        private mutating func value(depth: Int) throws(Problem) {
            guard let byte = current else { throw problem("expected a value") }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth + 1)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default: throw problem("expected a value")
            }
        }

        private mutating func enter(_ depth: Int) throws(Problem) {
            if depth > maximumDepth { throw problem("nested deeper than \(maximumDepth) levels") }
            position += 1
            skipWhitespace()
        }

        private mutating func object(depth: Int) throws(Problem) {
            try enter(depth)
            if current == UInt8(ascii: "}") { position += 1; return }
            while true {
                guard current == UInt8(ascii: "\"") else { throw problem("expected a string key") }
                let keyStart = position
                try string()
                let key = depth == 1 ? headerKey(from: keyStart) : nil
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':'")
                skipWhitespace()
                let valueStart = position
                try value(depth: depth)
                switch key {
                case .id: idRange = valueStart..<position
                case .cmd: cmdRange = valueStart..<position
                case nil: break
                }
                skipWhitespace()
                if current == UInt8(ascii: ",") { position += 1; skipWhitespace(); continue }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return
            }
        }

        private enum HeaderKey { case id, cmd }

        /// Whether the key just scanned is `"id"` or `"cmd"`, written plainly (an escaped
        /// spelling is not looked for: the decoder's reading serves then).
        private func headerKey(from start: Int) -> HeaderKey? {
            switch position - start {
            case 4 where bytes[start + 1] == UInt8(ascii: "i") && bytes[start + 2] == UInt8(ascii: "d"):
                return .id
            case 5 where bytes[start + 1] == UInt8(ascii: "c") && bytes[start + 2] == UInt8(ascii: "m") && bytes[start + 3] == UInt8(ascii: "d"):
                return .cmd
            default:
                return nil
            }
        }

        private mutating func array(depth: Int) throws(Problem) {
            try enter(depth)
            if current == UInt8(ascii: "]") { position += 1; return }
            while true {
                try value(depth: depth)
                skipWhitespace()
                if current == UInt8(ascii: ",") { position += 1; skipWhitespace(); continue }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return
            }
        }

        private mutating func literal(_ word: StaticString) throws(Problem) {
            let count = word.utf8CodeUnitCount
            let start = word.utf8Start
            for index in 0..<count {
                guard current == start[index] else { throw problem("expected '\(word)'") }
                position += 1
            }
        }

        private mutating func digits() -> Int {
            let start = position
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
            return position - start
        }

        private mutating func number() throws(Problem) {
            if current == UInt8(ascii: "-") { position += 1 }
            if current == UInt8(ascii: "0") {
                position += 1
            } else if digits() == 0 {
                throw problem("expected a digit")
            }
            if current == UInt8(ascii: ".") {
                position += 1
                if digits() == 0 { throw problem("expected a digit after '.'") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                position += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
                if digits() == 0 { throw problem("expected a digit in the exponent") }
            }
        }

        /// A string with valid escapes, no raw control characters and valid UTF-8.
        private mutating func string() throws(Problem) {
            position += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return
                case UInt8(ascii: "\\"):
                    position += 1
                    guard let escaped = current else { throw problem("unterminated string") }
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        position += 1
                    case UInt8(ascii: "u"):
                        position += 1
                        for _ in 0..<4 {
                            guard let hex = current, Self.isHexDigit(hex) else { throw problem("expected four hex digits after \\u") }
                            position += 1
                        }
                    default:
                        throw problem("invalid escape in a string")
                    }
                case 0x00..<0x20:
                    throw problem("control character in a string")
                case 0x00..<0x80:
                    position += 1
                default:
                    try utf8Sequence(lead: byte)
                }
            }
            throw problem("unterminated string")
        }

        private mutating func utf8Sequence(lead: UInt8) throws(Problem) {
            // Ranges from RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF.
            let continuation: Int
            var secondLow: UInt8 = 0x80, secondHigh: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: continuation = 1
            case 0xE0: continuation = 2; secondLow = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: continuation = 2
            case 0xED: continuation = 2; secondHigh = 0x9F
            case 0xF0: continuation = 3; secondLow = 0x90
            case 0xF1...0xF3: continuation = 3
            case 0xF4: continuation = 3; secondHigh = 0x8F
            default: throw problem("invalid UTF-8")
            }
            position += 1
            for index in 0..<continuation {
                guard let byte = current else { throw problem("unterminated string") }
                let low = index == 0 ? secondLow : 0x80
                let high = index == 0 ? secondHigh : 0xBF
                guard byte >= low, byte <= high else { throw problem("invalid UTF-8") }
                position += 1
            }
        }

        private static func isHexDigit(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}
