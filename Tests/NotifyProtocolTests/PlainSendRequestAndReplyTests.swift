import NotifyCoding
import Foundation
import NotifyProtocol
import NotifySystem
import NotifyTestSupport
import Testing

/// A client's send without the coders: its request line byte for byte as the encoder
/// writes it, and its reply read as the decoder reads it.
struct PlainSendRequestAndReplyTests {
    static func text(_ random: inout SplitMix64) -> String {
        let pieces = ["bob", "é", "e\u{301}", "🍷", "\u{2028}", "/", "\\", "\"", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", " ", ""]
        return (0..<random.below(5)).map { _ in pieces[random.below(pieces.count)] }.joined()
    }

    /// Whole seconds: the wire carries no fraction.
    static func date(_ random: inout SplitMix64) -> Date {
        Date(timeIntervalSince1970: Double(random.below(4_102_444_800)))
    }

    static func delivery(_ random: inout SplitMix64) -> DeliveryStatus {
        let states: [DeliveryState] = [.queued, .delivered, .failed, .expired, DeliveryState("held")]
        let codes: [ErrorCode] = [.backendUnavailable, .internalError, ErrorCode("new_code")]
        return DeliveryStatus(
            id: "00000000\(random.below(100))-apns", to: text(&random), pns: ["apns", "fcm", "wns"][random.below(3)],
            state: states[random.below(states.count)], attempts: random.below(3) == 0 ? random.below(1_000_000) : random.below(3),
            createdAt: date(&random),
            nextAttemptAt: random.below(2) == 0 ? date(&random) : nil, expiresAt: random.below(2) == 0 ? date(&random) : nil,
            error: random.below(2) == 0 ? WireError(code: codes[random.below(codes.count)], message: text(&random)) : nil,
            preview: random.below(2) == 0 ? text(&random) : nil)
    }

    static func reply(_ result: SendResult) throws -> [UInt8] {
        Array(try WireCoding.encoder().encode(Response(id: .number(1), result: result)))
    }

    static func read(_ line: [UInt8]) -> SendResult? {
        JSONValue(parsing: line)?["result"].flatMap(SendCommand.result(json:))
    }

    /// Seconds of work on a loaded machine that never suspends: off the pool, which the
    /// other tests' in-process daemons share (see `offThePool`).
    @Test func generatedRepliesAreReadAsTheDecoderReadsThem() async throws {
        let problems = try await offThePool { () -> [String] in
            var random = SplitMix64(seed: 0x5E4D)
            var problems: [String] = []
            for _ in 0..<5_000 {
                let result = SendResult(deliveries: (0..<random.below(4)).map { _ in Self.delivery(&random) })
                let line = try Self.reply(result)
                let decoded = try WireCoding.decoder().decode(Response<SendResult>.self, from: Data(line)).result
                if decoded != result { problems.append("decoded otherwise than encoded: \(String(decoding: line, as: UTF8.self))") }
                if Self.read(line) != decoded { problems.append("read otherwise than decoded: \(String(decoding: line, as: UTF8.self))") }
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems.count) replies, first: \(problems.prefix(5))")
    }

    /// A reply with a field the decoder would refuse, or read otherwise, is left to it.
    @Test(arguments: [
        #""attempts":"1""#, #""attempts":1.5"#, #""created_at":5"#, #""created_at":"yesterday""#, #""state":null"#,
        #""error":"x""#, #""error":{"code":"c"}"#, #""preview":3"#, #""next_attempt_at":true"#, #""expires_at":"2026-13-01T00:00:00Z""#,
    ])
    func aFieldOfAnotherShapeIsLeftToTheDecoder(field: String) {
        var members = [#""attempts":1"#, #""created_at":"2026-11-27T13:23:38Z""#, #""id":"0000000400-apns""#, #""pns":"apns""#,
                       #""state":"delivered""#, #""to":"bob""#]
        let name = field.prefix { $0 != ":" }
        members.removeAll { $0.hasPrefix(name + ":") }
        members.append(field)
        let line = Array(#"{"id":1,"ok":true,"result":{"deliveries":[{\#(members.joined(separator: ","))}]}}"#.utf8)
        #expect(Self.read(line) == nil)
    }

    @Test func anUnknownFieldAndANullOptionAreReadAsTheDecoderReadsThem() throws {
        let line = Array(#"{"id":1,"ok":true,"result":{"deliveries":[{"attempts":2,"created_at":"2026-11-27T13:23:38Z","error":null,"id":"1-apns","later":{"x":[1]},"pns":"apns","preview":null,"state":"queued","to":"bob"}],"more":true}}"#.utf8)
        let decoded = try WireCoding.decoder().decode(Response<SendResult>.self, from: Data(line)).result
        #expect(Self.read(line) == decoded)
        #expect(decoded?.deliveries.first?.attempts == 2)
    }

    @Test func generatedRequestsAreWrittenAsTheEncoderWritesThem() throws {
        var random = SplitMix64(seed: 0x5E4E)
        let timeouts: [Double?] = [nil, 0, 1, 30, 86_400, 999_999_999]
        for _ in 0..<5_000 {
            let command = SendCommand(
                to: Self.text(&random), message: Self.text(&random),
                pns: random.below(2) == 0 ? nil : [["apns"], ["apns", "fcm"], [], ["w/ns\""]][random.below(4)],
                wait: [nil, true, false][random.below(3)], queue: [nil, true, false][random.below(3)],
                timeout: timeouts[random.below(timeouts.count)])
            let id = random.below(3) == 0 ? random.below(Int(Int32.max)) : 1 + random.below(3)
            let encoded = try WireCoding.line(Request(id: .number(Double(id)), command: command))
            let plain = try #require(command.plainRequestLine(id: id))
            #expect(plain + [0x0A] == Array(encoded), "\(String(decoding: encoded, as: UTF8.self))")
        }
    }

    /// A fraction the encoder writes in its own way; and -0, which it writes as "-0".
    @Test(arguments: [1.5, 0.1, -0.0, 1e300])
    func aTimeoutWithAFractionIsLeftToTheEncoder(timeout: Double) {
        #expect(SendCommand(to: "bob", message: "x", timeout: timeout).plainRequestLine(id: 1) == nil)
    }
}

/// The commands without parameters write their request line without the encoder, and
/// `ping` reads its result without the decoder: both as the coders do.
struct PlainParameterlessCommandTests {
    static func check<Command: ParameterlessCommand>(_ command: Command, id: Int) throws {
        let encoded = try WireCoding.line(Request(id: .number(Double(id)), command: command))
        #expect(command.plainRequestLine(id: id).map { $0 + [0x0A] } == Array(encoded), "\(String(decoding: encoded, as: UTF8.self))")
    }

    /// A parameter added to one of them would make the encoder write it: this fails then.
    @Test(arguments: [1, 2, 99, 2_147_483_647])
    func aRequestLineIsTheEncoders(id: Int) throws {
        try Self.check(PingCommand(), id: id)
        try Self.check(StatusCommand(), id: id)
        try Self.check(WatchCommand(), id: id)
        try Self.check(StopCommand(), id: id)
        try Self.check(ReloadCommand(), id: id)
        try Self.check(UnregisterCommand(), id: id)
    }

    @Test func generatedPingRepliesAreReadAsTheDecoderReadsThem() throws {
        var random = SplitMix64(seed: 0x9196)
        for _ in 0..<2_000 {
            let result = PingResult(version: PlainSendRequestAndReplyTests.text(&random), protocol: random.below(1_000),
                                    pid: Int32(random.below(Int(Int32.max))))
            let line = Array(try WireCoding.encoder().encode(Response(id: .number(1), result: result)))
            let read = JSONValue(parsing: line)?["result"].flatMap(PingCommand.result(json:))
            #expect(read == result, "\(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test(arguments: [#"{"version":1,"protocol":1,"pid":2}"#, #"{"version":"1","protocol":1.5,"pid":2}"#,
                      #"{"version":"1","protocol":1,"pid":4294967296}"#, #"{"version":"1","pid":2}"#])
    func aPingResultOfAnotherShapeIsLeftToTheDecoder(text: String) throws {
        let json = try #require(JSONValue(parsing: Array(text.utf8)))
        #expect(PingCommand.result(json: json) == nil)
        #expect((try? WireCoding.decoder().decode(PingResult.self, from: Data(text.utf8))) == nil, "the decoder refuses it too")
    }
}
