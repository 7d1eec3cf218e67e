import NotifyCoding
import Foundation
import NotifyProtocol
import NotifySystem
import NotifyTestSupport
import Testing

/// Whatever `JSONValue(parsing:)` reads, the decoder must read the same: notifyctl reads
/// the daemon's replies that way, and where it gives up, notifyctl says it cannot read them.
struct JSONValueParsingTests {
    static func decoded(_ line: [UInt8]) -> JSONValue? {
        try? WireCoding.decoder().decode(JSONValue.self, from: Data(line))
    }

    /// The parse of `line`, checked against the decoder's; nil where the parser gave up.
    @discardableResult
    static func check(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
        let (parsed, mismatch) = compare(line)
        #expect(mismatch == nil, "\(mismatch ?? "")", sourceLocation: sourceLocation)
        return parsed
    }

    /// The parse of `line` (nil where the parser gave up), and how it differs from the
    /// decoder's. Returned rather than checked here: the loops below run off the pool,
    /// where `#expect` has no test to record an issue for.
    static func compare(_ line: [UInt8]) -> (parsed: JSONValue?, mismatch: String?) {
        guard (try? JSONShape.check(line)) != nil, let parsed = JSONValue(parsing: line) else { return (nil, nil) }
        let decoded = decoded(line)
        guard parsed != decoded else { return (parsed, nil) }
        return (parsed, "\(String(decoding: line, as: UTF8.self)): parsed \(parsed), decoded \(String(describing: decoded))")
    }

    @Test func aReplyIsReadWhole() throws {
        let line = #"{"id":1,"ok":true,"result":{"deliveries":[{"attempts":1,"created_at":"2026-11-27T13:23:38Z","id":"0000000400-apns","pns":"apns","preview":"hi","state":"delivered","to":"user0"}]}}"#
        let parsed = try #require(Self.check(Array(line.utf8)))
        #expect(parsed["result"]?["deliveries"] == .array([.object([
            "attempts": .number(1), "created_at": .string("2026-11-27T13:23:38Z"), "id": .string("0000000400-apns"),
            "pns": .string("apns"), "preview": .string("hi"), "state": .string("delivered"), "to": .string("user0"),
        ])]))
    }

    @Test(arguments: [
        #"["\"\\\/\b\f\n\r\t"]"#,
        #"["\u00e9\u0000\u001F\u2028\uFEFF", "\ud83c\udf77", "e\u0301"]"#,
        "[\"caf\u{E9} \u{1F377} \u{7F}\"]",
        #"{"a":1,"b":{"a":[]},"":null}"#,
        " \t\r\n[ 1 , -0 , 0.5 , -12.25 , 9007199254740993 , 123456789012345678901234567890 , 0.1000000000000000055511151231257827021181583404541015625 ] \n",
        #"[1e3, 1E+2, 2.5e-3, -1e-05, 1.7976931348623157e308, 4.9e-324]"#,
        #"[true,false,null,[],{},[[{}]]]"#,
    ])
    func aTrickyLineIsReadAsTheDecoderReadsIt(line: String) {
        #expect(Self.check(Array(line.utf8)) != nil, "the parser gave up on \(line)")
    }

    /// What the parser refuses, which notifyd never writes and the decoder may read another
    /// way: a repeated key (a dictionary keeps its first value, a keyed container its last),
    /// a zero with an exponent or a number that underflows (the decoder refuses some, such
    /// as 0e3 and 1e-400), a number a Double cannot hold, a surrogate without its other half.
    @Test(arguments: [#"{"a":1,"a":2}"#, #"[{"b":{"a":1,"a":1}}]"#, #"[0E1]"#, #"[0.0e-5]"#, #"[1e-400]"#, "[" + String(repeating: "9", count: 400) + "]", #"["\ud800"]"#,
                      #"["\udc00\ud800"]"#, #"["\ud83c\u0041"]"#])
    func aLineTheDecoderMayReadAnotherWayIsRefused(line: String) {
        #expect(JSONValue(parsing: Array(line.utf8)) == nil)
    }

    /// Every single-byte change and every truncation of a reply: no trap, and no reading
    /// the decoder does not share.
    ///
    /// The loops run for seconds without suspending: off the pool, which the other tests'
    /// in-process daemons share (see `offThePool`).
    @Test func mutatedLines() async throws {
        let mismatches = try await offThePool { () -> [String] in
            let base = Array(#"{"id":7,"ok":true,"result":{"a":[1,-2.5,"\u00e9\n",true,null],"b":{"c":"d"}}}"#.utf8)
            var lines: [[UInt8]] = []
            for index in base.indices {
                for byte in UInt8.min...UInt8.max where byte != base[index] {
                    var line = base
                    line[index] = byte
                    lines.append(line)
                }
            }
            for end in 0..<base.count { lines.append(Array(base[0..<end])) }
            return lines.compactMap { Self.compare($0).mismatch }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) lines read differently, first: \(mismatches.prefix(5))")
    }

    @Test func generatedLines() async throws {
        let (read, mismatches) = try await offThePool(Self.generated)
        #expect(mismatches.isEmpty, "\(mismatches.count) lines read differently, first: \(mismatches.prefix(5))")
        #expect(read > 20_000, "the parser read \(read) lines: the comparison would test little")
    }

    static func generated() -> (read: Int, mismatches: [String]) {
        var random = SplitMix64(seed: 0x7A5E)
        func pick(_ items: [String]) -> String { items[random.below(items.count)] }
        func whitespace() -> String { pick(["", "", "", " ", "\t", "\r\n "]) }
        func text() -> String {
            "\"" + (0..<random.below(4)).map { _ in
                pick(["bob", "é", "e\u{301}", "🍷", "\u{2028}", "/", "\\/", "\\n", "\\\"", "\\\\", "\\u0000", "\\u00E9", "\\ud83c\\udf77", "\\ud800", ":", "}", ""])
            }.joined() + "\""
        }
        func number() -> String {
            pick(["", "", "-"]) + pick(["0", "1", "30", "9007199254740993", "123456789012345678901234567890"])
                + pick(["", "", ".5", ".0", ".000000000000000000001"]) + pick(["", "", "", "", "e1", "E-2", "e-400", "e+400"])
        }
        func value(_ depth: Int) -> String {
            switch random.below(depth > 3 ? 4 : 6) {
            case 0, 1: return text()
            case 2: return pick(["true", "false", "null"])
            case 3: return number()
            case 4: return "[" + (0..<random.below(4)).map { _ in whitespace() + value(depth + 1) + whitespace() }.joined(separator: ",") + "]"
            default:
                return "{" + (0..<random.below(4)).map { _ in
                    whitespace() + pick(["\"a\"", "\"b\"", "\"id\"", "\"\"", text()]) + whitespace() + ":" + whitespace() + value(depth + 1) + whitespace()
                }.joined(separator: ",") + "}"
            }
        }
        var read = 0
        var mismatches: [String] = []
        for _ in 0..<50_000 {
            let (parsed, mismatch) = compare(Array((whitespace() + value(0) + whitespace()).utf8))
            if parsed != nil { read += 1 }
            if let mismatch { mismatches.append(mismatch) }
        }
        return (read, mismatches)
    }
}
