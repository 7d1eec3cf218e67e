import NotifyCoding
import Foundation
import NotifyProtocol
import NotifySystem
import NotifyTestSupport
import Testing

/// Whatever `SendCommand(plainLine:)` takes, the router's slow path (shape check, then the
/// decoder) must take and read the same way, byte for byte.
struct PlainSendLineFuzzTests {
    typealias Reading = (to: [UInt8], message: [UInt8], pns: [[UInt8]]?, wait: Bool?, queue: Bool?, timeout: UInt64?)

    static func fast(_ line: [UInt8]) -> Reading? {
        guard let shape = try? JSONShape.check(line), let cmd = shape.cmdRange, line[cmd].elementsEqual(#""send""#.utf8),
              let command = SendCommand(plainLine: line) else { return nil }
        return reading(command)
    }

    static func slow(_ line: [UInt8]) -> Reading? {
        guard (try? JSONShape.check(line)) != nil,
              let command = try? WireCoding.decoder().decode(SendCommand.self, from: Data(line)) else { return nil }
        return reading(command)
    }

    static func reading(_ command: SendCommand) -> Reading {
        (Array((command.to ?? "").utf8), Array(command.message.utf8), command.pns?.map { Array($0.utf8) }, command.wait, command.queue,
         command.timeout?.bitPattern)
    }

    /// How the two paths read `line` differently, or nil when they agree or the fast one
    /// does not take it. Returned rather than checked here: the loops below run off the
    /// pool, where `#expect` has no test to record an issue for.
    static func mismatch(_ line: [UInt8]) -> String? {
        guard let fast = fast(line) else { return nil }
        let slow = slow(line)
        let same = slow.map {
            fast.to == $0.to && fast.message == $0.message && fast.pns == $0.pns && fast.wait == $0.wait && fast.queue == $0.queue
                && fast.timeout == $0.timeout
        }
        return same == true ? nil : "\(String(decoding: line, as: UTF8.self)): fast \(fast), slow \(String(describing: slow))"
    }

    static func check(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let mismatch = Self.mismatch(line)
        #expect(mismatch == nil, "\(mismatch ?? "")", sourceLocation: sourceLocation)
    }

    @Test(arguments: ["1e-400", "-1e-400", "2e-324", "0e3", "0E1", "0.00e2", "0e10", "0.000", "-0", "4.9e-324", "1e309",
                      "1.7976931348623159e308", "123456789012345678901234567890",
                      "0.1000000000000000055511151231257827021181583404541015625"])
    func aTimeoutIsReadAsTheDecoderReadsIt(number: String) {
        Self.check(Array(#"{"cmd":"send","to":"bob","message":"x","timeout":\#(number)}"#.utf8))
    }

    @Test(arguments: [
        #"{"cmd":"send","to":"bob","message":"x","extra":1,"extra":[],"":1,"":2}"#,
        #"{"cmd":"send","to":"bob","message":"x","id":1e999}"#,
        #"{"cmd":"send","to":"bob","message":"x","id":["a"]}"#,
        "{\"cmd\":\"send\",\"to\":\"bob\",\"message\":\"caf\u{E9} e\u{301} \u{2028}\u{7F}\u{FEFF}\",\"\u{E9}\":1,\"e\u{301}\":2}",
        "\t\r\n {\"cmd\" :\t\"send\"\n,\r\"to\":\"bob\" , \"message\":\"x\" } \n\t",
        #"{"to":"bob","message":"\"cmd\":\"send\"","cmd":"send"}"#,
        #"{"cmd":"send","to":"bob","message":"x","TO":"carol","Cmd":"ping","list":["a",null]}"#,
    ])
    func aTrickyLineIsReadAsTheDecoderReadsIt(line: String) {
        Self.check(Array(line.utf8))
    }

    /// Every single-byte change and every truncation of a plain line: no trap, and no
    /// reading the decoder does not share.
    ///
    /// The loops run for seconds without suspending: off the pool, which the other tests'
    /// in-process daemons share (see `offThePool`).
    @Test func mutatedLines() async throws {
        let mismatches = try await offThePool { () -> [String] in
            let base = Array(#"{"id":7,"cmd":"send","to":"bob","message":"hi","pns":["apns"],"wait":true,"queue":false,"timeout":1.5,"x":null}"#.utf8)
            var mismatches: [String] = []
            for index in base.indices {
                for byte in UInt8.min...UInt8.max where byte != base[index] {
                    var line = base
                    line[index] = byte
                    if let mismatch = Self.mismatch(line) { mismatches.append(mismatch) }
                    _ = SendCommand(plainLine: line)
                }
            }
            for end in 0..<base.count { if let mismatch = Self.mismatch(Array(base[0..<end])) { mismatches.append(mismatch) } }
            return mismatches
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) lines read differently, first: \(mismatches.prefix(5))")
    }

    @Test func generatedLines() async throws {
        let (taken, mismatches) = try await offThePool(Self.generated)
        #expect(mismatches.isEmpty, "\(mismatches.count) lines read differently, first: \(mismatches.prefix(5))")
        #expect(taken > 10_000, "the fast path took \(taken) lines: the comparison would test little")
    }

    static func generated() -> (taken: Int, mismatches: [String]) {
        var random = SplitMix64(seed: 0x5EED)
        func pick(_ items: [String]) -> String { items[random.below(items.count)] }
        func whitespace() -> String { pick(["", "", " ", "\t", "\r\n "]) }
        func text() -> String {
            (0..<random.below(4)).map { _ in
                pick(["bob", "é", "e\u{301}", "🍷", "\u{2028}", "/", "\\n", "\\\"", "\\u0000", "\\ud83c\\udf77", "\\ud800", "cmd", ":", "}", ""])
            }.joined()
        }
        func number() -> String {
            pick(["", "", "-"]) + pick(["0", "0", "1", "30", "9007199254740993", "123456789012345678901234567890"])
                + pick(["", "", ".5", ".0", ".00", ".000000000000000000001"]) + pick(["", "", "e1", "E2", "e3", "e-400", "e+400", "e308", "e-324", "e0"])
        }
        func value() -> String {
            switch random.below(7) {
            case 0, 1: return "\"" + text() + "\""
            case 2: return pick(["true", "false", "null"])
            case 3, 4: return number()
            case 5: return "[" + (0..<random.below(3)).map { _ in "\"" + text() + "\"" }.joined(separator: whitespace() + "," + whitespace()) + "]"
            default: return pick(["{}", "{\"a\":1}", "[1]", "[[\"a\"]]"])
            }
        }
        func member(_ key: String) -> String {
            let content: String
            if random.below(4) == 0 {
                content = value()
            } else {
                switch key {
                case "to": content = pick(["\"bob\"", "\"\"", "\"" + text() + "\""])
                case "message": content = "\"" + text() + "\""
                case "pns": content = pick(["[\"apns\"]", "[\"apns\",\"fcm\"]", "[]", "null"])
                case "wait", "queue": content = pick(["true", "false", "null"])
                case "timeout": content = random.below(3) == 0 ? "null" : number()
                default: content = value()
                }
            }
            return "\"" + key + "\"" + whitespace() + ":" + whitespace() + content
        }
        var taken = 0
        var mismatches: [String] = []
        for _ in 0..<100_000 {
            var members = ["\"cmd\":\"send\"", member("to"), member("message")]
            for _ in 0..<random.below(5) {
                members.append(member(pick(["to", "message", "pns", "wait", "queue", "timeout", "id", "cmd", "x", "", "t\\u006f", "é"])))
            }
            for index in members.indices.reversed() { members.swapAt(index, random.below(index + 1)) }
            let line = Array((whitespace() + "{" + members.joined(separator: whitespace() + "," + whitespace()) + "}" + whitespace()).utf8)
            if fast(line) != nil { taken += 1 }
            if let mismatch = Self.mismatch(line) { mismatches.append(mismatch) }
        }
        return (taken, mismatches)
    }
}
