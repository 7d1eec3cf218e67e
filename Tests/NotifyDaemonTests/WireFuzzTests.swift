import Foundation
import NotifyCore
import NotifyProtocol
import NotifySocket
import NotifyTestSupport
import Testing
import NotifySystem

/// 100,000 generated request lines, from a fixed seed, through a running daemon's line
/// splitter and request decoder: random bytes, invalid UTF-8, NUL, nesting up to 200,000
/// deep, huge numbers and strings, and every field of every command with every JSON type.
/// The daemon must answer every line that is not blank with one reply, in order, carrying
/// the request's id whenever the line is an object whose id could be read, and then answer
/// a ping. `stop` and `watch` are left out: one ends the daemon, the other turns the
/// connection into an event stream.
@Suite(.stopsFixtures) struct WireFuzzTests {
    static let seed: UInt64 = 0x6E6F_7469_6679_6421
    static let lineCount = 100_000

    @Test func generatedLinesEachGetOneReplyAndTheDaemonLivesOn() async throws {
        let fixture = try await DaemonFixture()
        let cases = try await offThePool {
            var generator = LineGenerator(seed: Self.seed)
            return (0..<Self.lineCount).map { generator.next(sequence: $0) }
        }
        let path = fixture.socketPath

        let replies = try await onThread { () -> [[UInt8]] in
            let connection = try RawConnection(path: path)
            UnixSocket.setReceiveTimeout(connection.fd, seconds: 60)
            // Written from another thread in chunks of random size, so that lines arrive cut
            // anywhere, while this one reads: neither side waits for the other.
            let writer = Thread { [fd = connection.fd] in
                var chunks = SplitMix64(seed: Self.seed ^ 1)
                var pending: [UInt8] = []
                for fuzzCase in cases {
                    pending += fuzzCase.line
                    pending.append(0x0A)
                    if pending.count > Int.random(in: 1...65_536, using: &chunks) {
                        try? UnixSocket.writeAll(fd, pending)
                        pending.removeAll(keepingCapacity: true)
                    }
                }
                pending += Array("{\"id\":\"last\",\"cmd\":\"ping\"}\n".utf8)
                try? UnixSocket.writeAll(fd, pending)
            }
            writer.start()
            var replies: [[UInt8]] = []
            let expected = cases.filter { $0.expectation != .noReply }.count + 1
            while replies.count < expected, case .line(let bytes) = connection.reader.next() {
                replies.append(bytes)
            }
            return replies
        }

        let answered = cases.filter { $0.expectation != .noReply }
        try #require(replies.count == answered.count + 1, "one reply per line that is not blank, and one for the last ping (seed \(Self.seed))")
        let mismatches = try await offThePool {
            zip(answered, replies).compactMap { fuzzCase, reply in
                fuzzCase.expectation.problem(with: reply).map { "\($0): line \(fuzzCase.sequence) \(Self.shown(fuzzCase.line)) → \(Self.shown(reply))" }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) replies not as expected, first: \(mismatches.prefix(5).joined(separator: "\n"))")
        let last = try JSONDecoder().decode(JSONValue.self, from: Data(replies[replies.count - 1]))
        #expect(last["id"] == .string("last") && last["ok"] == .bool(true))

        _ = try await fixture.call(PingCommand())
    }

    private static func shown(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(160), as: UTF8.self).debugDescription
    }

    /// Right at the line limit a request is read; one byte over, it gets `line_too_long`
    /// and the connection closes, and the daemon goes on serving others.
    @Test(arguments: [-1, 0, 1])
    func aLineAroundTheLimit(offset: Int) async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let frame = Array("{\"cmd\":\"ping\",\"id\":\"\"}".utf8)
        let padding = WireCoding.maximumLineLength + offset - frame.count
        let line = Array("{\"cmd\":\"ping\",\"id\":\"".utf8) + [UInt8](repeating: 0x78, count: padding) + Array("\"}\n".utf8)
        #expect(line.count - 1 == WireCoding.maximumLineLength + offset)
        let (first, second) = try await onThread { () -> (JSONValue?, JSONValue?) in
            let connection = try RawConnection(path: path)
            try? UnixSocket.writeAll(connection.fd, line + Array("{\"cmd\":\"ping\",\"id\":2}\n".utf8))
            return (connection.receive(), connection.receive())
        }
        if offset <= 0 {
            #expect(first?["ok"] == .bool(true))
            #expect(first?["id"]?.stringValue?.count == padding)
            #expect(second?["id"] == .number(2))
        } else {
            #expect(first?["error"]?["code"] == .string("line_too_long"))
            #expect(second == nil, "closed after the refusal")
        }
        _ = try await fixture.call(PingCommand())
    }
}

/// One generated line and what its reply must show.
struct FuzzCase: Sendable {
    let sequence: Int
    let line: [UInt8]
    let expectation: Expectation

    enum Expectation: Equatable, Sendable {
        /// Blank (only spaces, tabs and carriage returns): skipped without a reply.
        case noReply
        /// A reply object: `"ok":true` with a result, or `"ok":false` with an error object.
        case anyReply
        /// An error reply with this code and no id (none could be read).
        case error(String)
        /// A reply whose id is this number.
        case id(Int)

        /// The envelope of a reply; its id is read from the bytes, as it may be a number no
        /// `Double` holds.
        private struct Envelope: Decodable {
            struct ErrorObject: Decodable {
                var code: String
                var message: String
            }
            var ok: Bool
            var result: JSONValue?
            var error: ErrorObject?
        }

        func problem(with reply: [UInt8]) -> String? {
            guard let shape = try? JSONShape.check(reply), let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(reply)) else {
                return "reply is not a JSON object"
            }
            if envelope.ok && envelope.result == nil { return "ok without a result" }
            if !envelope.ok && envelope.error == nil { return "error without code and message" }
            let id = shape.idRange.map { String(decoding: reply[$0], as: UTF8.self) }
            switch self {
            case .noReply, .anyReply:
                return nil
            case .error(let code):
                return envelope.error?.code == code && id == nil ? nil : "expected error \(code) without an id"
            case .id(let expected):
                return id == String(expected) ? nil : "expected id \(expected)"
            }
        }
    }
}

/// Request lines of every kind, from a seed.
struct LineGenerator {
    private var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// Every command but `stop` and `watch`, with the fields it reads.
    static let commands: [(name: String, required: [String: String], fields: [String])] = [
        ("ping", [:], []), ("hello", [:], []), ("status", [:], []),
        ("login", ["user": "\"fuzz\""], ["user", "password", "backend", "wait", "timeout"]),
        ("logout", [:], ["force"]),
        ("set-token", ["token": "\"zz\""], ["token", "platform", "wait", "timeout"]),
        ("set-tags", ["tags": "[]"], ["tags", "wait", "timeout"]),
        ("register", [:], ["wait", "timeout"]),
        ("unregister", [:], []),
        ("send", ["to": "\"bob\"", "message": "\"m\""], ["to", "message", "pns", "wait", "queue", "timeout"]),
        ("outbox", [:], ["purge"]),
        ("outbox-retry", [:], ["delivery"]),
        ("outbox-cancel", ["delivery": "\"none\""], ["delivery"]),
        ("reload", [:], []),
    ]

    /// JSON values of every type, edge cases included.
    static let values = [
        "null", "true", "false", "0", "-1", "0.01", "-0", "1e400", "-1e400", "1e-400", "9007199254740993",
        "123456789012345678901234567890123456789", "\"\"", "\"x\"", "\"\\u0000\"", "\"\\ud800\"", "\"apns\"", "\"fcm,wns\"",
        "[]", "[1]", "[\"apns\",\"fcm\"]", "[[[]]]", "{}", "{\"a\":1}", "[null,true,\"s\",{}]",
    ]

    mutating func next(sequence: Int) -> FuzzCase {
        switch random.next() % 100 {
        case 0..<28: return randomBytes(sequence)
        case 28..<36: return invalidUTF8(sequence)
        case 36..<42: return withNUL(sequence)
        case 42..<46: return hugeNumber(sequence)
        case 46..<48: return hugeString(sequence)
        case 48..<52: return blank(sequence)
        case 52 where random.next() % 20 == 0: return deeplyNested(sequence)
        case 52..<58: return nested(sequence, depth: Int(random.next() % 40) + 1)
        case 58..<64: return commandAsEveryType(sequence)
        default: return everyFieldEveryType(sequence)
        }
    }

    private mutating func randomBytes(_ sequence: Int) -> FuzzCase {
        let length = Int(random.next() % 200) + 1
        let line = (0..<length).map { _ -> UInt8 in
            let byte = UInt8(truncatingIfNeeded: random.next())
            return byte == 0x0A ? 0x7B : byte
        }
        return FuzzCase(sequence: sequence, line: line, expectation: Self.isBlank(line) ? .noReply : .anyReply)
    }

    private static let badUTF8: [[UInt8]] = [
        [0xFF], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
        [0xC3], [0xE2, 0x82], [0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFE, 0xFF],
    ]

    private mutating func invalidUTF8(_ sequence: Int) -> FuzzCase {
        let bad = Self.badUTF8[Int(random.next() % UInt64(Self.badUTF8.count))]
        let line: [UInt8]
        switch random.next() % 3 {
        case 0: line = Array("{\"cmd\":\"ping\",\"id\":\"a".utf8) + bad + Array("b\"}".utf8)
        case 1: line = Array("{\"cmd\":\"send\",\"to\":\"bob\",\"message\":\"".utf8) + bad + Array("\"}".utf8)
        default: line = Array("{\"".utf8) + bad + Array("\":1,\"cmd\":\"status\"}".utf8)
        }
        return FuzzCase(sequence: sequence, line: line, expectation: .error("malformed_request"))
    }

    private mutating func withNUL(_ sequence: Int) -> FuzzCase {
        var line = Array("{\"cmd\":\"ping\",\"id\":\"nul\"}".utf8)
        line.insert(0, at: Int(random.next() % UInt64(line.count + 1)))
        return FuzzCase(sequence: sequence, line: line, expectation: .error("malformed_request"))
    }

    private mutating func hugeNumber(_ sequence: Int) -> FuzzCase {
        let digits = String((0..<(Int(random.next() % 400) + 1)).map { _ in Character(String(random.next() % 10)) })
        let forms = [digits, "-" + digits, digits + "e" + digits, "0." + digits + "e-999999", "1e999999"]
        let number = forms[Int(random.next() % UInt64(forms.count))]
        let line = random.next() % 2 == 0
            ? "{\"cmd\":\"ping\",\"id\":\(number)}"
            : "{\"id\":\(sequence),\"cmd\":\"send\",\"to\":\"bob\",\"message\":\"m\",\"timeout\":\(number)}"
        return FuzzCase(sequence: sequence, line: Array(line.utf8), expectation: .anyReply)
    }

    /// Strings from 64 KiB up to just under the line limit; over it is `aLineAroundTheLimit`,
    /// as it closes the connection.
    private mutating func hugeString(_ sequence: Int) -> FuzzCase {
        let length = WireCoding.maximumLineLength - 64 - Int(random.next() % UInt64(WireCoding.maximumLineLength / 4))
        let text = String(repeating: random.next() % 2 == 0 ? "é" : "\\u00e9x", count: length / 7)
        let line = "{\"id\":\(sequence),\"cmd\":\"send\",\"to\":\"bob\",\"message\":\"\(text)\"}"
        return FuzzCase(sequence: sequence, line: Array(line.utf8), expectation: .id(sequence))
    }

    private mutating func blank(_ sequence: Int) -> FuzzCase {
        let line = (0..<Int(random.next() % 8)).map { _ in [UInt8(0x20), 0x09, 0x0D][Int(random.next() % 3)] }
        return FuzzCase(sequence: sequence, line: line, expectation: .noReply)
    }

    /// `[` or `{` (bare, or opening an object) up to 200,000 deep, unbalanced: 200,000
    /// balanced levels would not fit in a line.
    private mutating func deeplyNested(_ sequence: Int) -> FuzzCase {
        let depth = Int(random.next() % 200_000) + 1
        let opening: [UInt8]
        switch random.next() % 3 {
        case 0: opening = [UInt8](repeating: 0x5B, count: depth)
        case 1: opening = [UInt8](repeating: 0x7B, count: depth)
        default: opening = Array(Array("{\"a\":[".utf8).repeated(depth / 6 + 1).prefix(depth))
        }
        let line = random.next() % 2 == 0 ? opening : Array("{\"cmd\":\"ping\",\"id\":".utf8) + opening
        return FuzzCase(sequence: sequence, line: line, expectation: .error("malformed_request"))
    }

    private mutating func nested(_ sequence: Int, depth: Int) -> FuzzCase {
        var opening: [UInt8] = []
        var closing: [UInt8] = []
        for _ in 0..<depth {
            if random.next() % 2 == 0 {
                opening.append(0x5B)
                closing.append(0x5D)
            } else {
                opening += Array("{\"a\":".utf8)
                closing.append(0x7D)
            }
        }
        let balanced = random.next() % 2 == 0
        let value = opening + Array("1".utf8) + (balanced ? closing.reversed() : [])
        if random.next() % 2 == 0 {
            return FuzzCase(sequence: sequence, line: value, expectation: .error("malformed_request"))
        }
        let line = Array("{\"cmd\":\"ping\",\"id\":".utf8) + value + Array("}".utf8)
        return FuzzCase(sequence: sequence, line: line, expectation: .anyReply)
    }

    private mutating func commandAsEveryType(_ sequence: Int) -> FuzzCase {
        let value = pick(Self.values)
        let line = "{\"id\":\(sequence),\"cmd\":\(value)}"
        return FuzzCase(sequence: sequence, line: Array(line.utf8), expectation: .id(sequence))
    }

    private mutating func everyFieldEveryType(_ sequence: Int) -> FuzzCase {
        let command = pick(Self.commands)
        var fields = command.required
        if let field = command.fields.isEmpty ? nil : pick(command.fields) {
            fields[field] = pick(Self.values)
            // Whatever the field tried, the command does not wait: replies come in order,
            // and a wait of seconds would hold every reply behind it.
            if command.fields.contains("wait") {
                if field == "wait" { fields["timeout"] = "0" } else { fields["wait"] = "false" }
            }
        }
        if random.next() % 4 == 0 { fields["unknown"] = pick(Self.values) }
        // Sorted: a line depends on the seed alone, not on the dictionary's order.
        let body = fields.keys.sorted().map { "\"\($0)\":\(fields[$0]!)" }
        let line = "{" + (["\"id\":\(sequence)", "\"cmd\":\"\(command.name)\""] + body).joined(separator: ",") + "}"
        return FuzzCase(sequence: sequence, line: Array(line.utf8), expectation: .id(sequence))
    }

    private mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(random.next() % UInt64(choices.count))]
    }

    static func isBlank(_ line: [UInt8]) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}

private extension Array {
    func repeated(_ times: Int) -> [Element] {
        (0..<times).flatMap { _ in self }
    }
}
