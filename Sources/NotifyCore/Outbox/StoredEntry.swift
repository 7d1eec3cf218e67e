#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyProtocol

/// Where one outbox entry's record is on disk: a file of its own (`<id>.json`), or a range
/// of bytes in a batch file, which is one JSON object of the batch's `entries` array. A
/// queued message whose turn has not come is kept in memory as this and a few fields
/// (`DeferredDeliveries`); its record, the message's text with it, is read back at its turn.
///
/// The batch is the one whose members' sequence numbers include the entry's (the store
/// knows them, `OutboxStore`); a length of 0 means the entry's own file.
public struct StoredEntry: Sendable, Equatable {
    var offset: UInt32
    var length: UInt32

    static let inOwnFile = StoredEntry(offset: 0, length: 0)

    var isOwnFile: Bool { length == 0 }
}

/// The byte ranges of the elements of a batch file's `entries` array, found without
/// decoding them: each is one entry's record, read back alone at its turn.
enum BatchEntryRanges {
    struct Malformed: Error, CustomStringConvertible {
        var description: String { "its entries could not be told apart" }
    }

    /// The ranges, in order, of the elements of the top-level object's `entries` array.
    static func find(in bytes: UnsafeRawBufferPointer) throws -> [Range<Int>] {
        try layout(of: bytes).entries
    }

    /// The entries' ranges and the file's `version` (nil when it has none), in one pass:
    /// a 16 MiB batch is not decoded whole to learn its version.
    static func layout(of bytes: UnsafeRawBufferPointer) throws -> (entries: [Range<Int>], version: Int?) {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        try scanner.expect(UInt8(ascii: "{"))
        var ranges: [Range<Int>]?
        var version: Int?
        scanner.skipSpace()
        if scanner.peek == UInt8(ascii: "}") { throw Malformed() }
        while true {
            scanner.skipSpace()
            let keyStart = scanner.position
            try scanner.skipString()
            let key = scanner.text(keyStart..<scanner.position)
            scanner.skipSpace()
            try scanner.expect(UInt8(ascii: ":"))
            scanner.skipSpace()
            let valueStart = scanner.position
            // A key written twice counts once, as its first value, as the decoder reads it.
            if key == "\"entries\"" && ranges == nil {
                ranges = try scanner.arrayElements()
            } else {
                try scanner.skipValue()
            }
            if key == "\"version\"" && version == nil {
                // Anything but a plain number is a damaged file, as the decoder would find.
                let words = scanner.text(valueStart..<scanner.position).split(whereSeparator: \.isWhitespace)
                guard words.count == 1, let number = Int(words[0]) else { throw Malformed() }
                version = number
            }
            scanner.skipSpace()
            if scanner.peek == UInt8(ascii: ",") {
                scanner.position += 1
                continue
            }
            try scanner.expect(UInt8(ascii: "}"))
            break
        }
        guard let ranges else { throw Malformed() }
        return (ranges, version)
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            guard peek == byte else { throw Malformed() }
            position += 1
        }

        /// Found with `memchr`: a batch is mostly its messages' text, which this skips. A
        /// quote ends the string unless an odd run of backslashes escapes it.
        mutating func skipString() throws {
            try expect(UInt8(ascii: "\""))
            guard let base = bytes.baseAddress else { throw Malformed() }
            while position < bytes.count {
                guard let found = memchr(base + position, Int32(UInt8(ascii: "\"")), bytes.count - position) else { break }
                let quote = base.distance(to: UnsafeRawPointer(found))
                var backslashes = 0
                while quote - backslashes - 1 >= position && bytes[quote - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
                position = quote + 1
                if backslashes % 2 == 0 { return }
            }
            throw Malformed()
        }

        /// Skips an object or array by its brackets, strings skipped whole; any other value
        /// up to the next delimiter.
        mutating func skipValue() throws {
            guard let first = peek else { throw Malformed() }
            if first == UInt8(ascii: "\"") { return try skipString() }
            guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
                while let byte = peek, byte != UInt8(ascii: ","), byte != UInt8(ascii: "}"), byte != UInt8(ascii: "]") { position += 1 }
                return
            }
            var depth = 0
            while let byte = peek {
                switch byte {
                case UInt8(ascii: "\""):
                    try skipString()
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                default:
                    break
                }
                position += 1
                if depth == 0 { return }
            }
            throw Malformed()
        }

        mutating func arrayElements() throws -> [Range<Int>] {
            try expect(UInt8(ascii: "["))
            var ranges: [Range<Int>] = []
            skipSpace()
            if peek == UInt8(ascii: "]") {
                position += 1
                return ranges
            }
            while true {
                skipSpace()
                let start = position
                guard peek == UInt8(ascii: "{") else { throw Malformed() }
                try skipValue()
                ranges.append(start..<position)
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return ranges
            }
        }
    }
}
