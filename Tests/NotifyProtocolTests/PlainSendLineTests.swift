import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// `SendCommand(plainLine:)` reads what the decoder reads, or leaves the line to it.
struct PlainSendLineTests {
    private static func decoded(_ line: String) -> SendCommand? {
        try? WireCoding.decoder().decode(SendCommand.self, from: Data(line.utf8))
    }

    private static func plain(_ line: String) throws -> SendCommand? {
        try JSONShape.check(Array(line.utf8))
        return SendCommand(plainLine: Array(line.utf8))
    }

    private static func same(_ a: SendCommand?, _ b: SendCommand?) -> Bool {
        // Bytes, not String `==`, which calls canonically equivalent texts equal.
        a.map { $0.to.map { Array($0.utf8) } } == b.map { $0.to.map { Array($0.utf8) } } && a.map { Array($0.message.utf8) } == b.map { Array($0.message.utf8) }
            && a?.pns?.map { Array($0.utf8) } == b?.pns?.map { Array($0.utf8) } && a?.wait == b?.wait && a?.queue == b?.queue
            && a?.timeout == b?.timeout && (a == nil) == (b == nil)
    }

    @Test(arguments: [
        #"{"id":1,"cmd":"send","to":"user0","message":"message 1"}"#,
        #"  { "cmd" : "send" , "to" : "bob" , "message" : "héllo 🍷 <b>&" , "id" : "a" }  "#,
        #"{"cmd":"send","to":"bob","message":"x","pns":["apns","fcm"],"wait":true,"queue":false,"timeout":25.5}"#,
        #"{"cmd":"send","to":"bob","message":"x","timeout":2.5e1}"#,
        #"{"cmd":"send","to":"bob","message":"x","pns":[],"wait":null,"queue":null,"timeout":null}"#,
        #"{"cmd":"send","to":"bob","message":"x","pns":null,"timeout":-0}"#,
        #"{"cmd":"send","to":"bob","message":"x","timeout":10,"extra":["a","b"],"other":"y","more":null,"n":-1.5E-3}"#,
        #"{"cmd":"send","to":"","message":""}"#,
        #"{"id":{"a":1},"cmd":"send","to":"bob","message":"x"}"#,
    ])
    func aPlainLineReadsAsTheDecoderReadsIt(line: String) throws {
        let plain = try Self.plain(line)
        #expect(Self.same(plain, Self.decoded(line)) || plain == nil)
        if !line.contains(#""id":{"#) { #expect(plain != nil) }
    }

    @Test(arguments: [
        #"{"cmd":"send","to":"bob","message":"say \"hi\"\n"}"#,
        #"{"cmd":"send","to":"b\u006fb","message":"x"}"#,
        #"{"cmd":"send","to":"bob","to":"carol","message":"x"}"#,
        #"{"cmd":"send","to":"bob","message":"x","message":"y"}"#,
        #"{"cmd":"send","to":"bob","message":"x","id":1,"id":2}"#,
        #"{"cmd":"send","to":"bob"}"#,
        #"{"cmd":"send","message":"x"}"#,
        #"{"cmd":"send","to":null,"message":"x"}"#,
        #"{"cmd":"send","to":1,"message":"x"}"#,
        #"{"cmd":"send","to":"bob","message":"x","pns":"apns"}"#,
        #"{"cmd":"send","to":"bob","message":"x","pns":[1]}"#,
        #"{"cmd":"send","to":"bob","message":"x","wait":1}"#,
        #"{"cmd":"send","to":"bob","message":"x","timeout":"1"}"#,
        #"{"cmd":"send","to":"bob","message":"x","timeout":1e999}"#,
        // A zero with an exponent, or one that underflows: the decoder refuses some (0e3, 1e-400).
        #"{"cmd":"send","to":"bob","message":"x","timeout":0e3}"#,
        #"{"cmd":"send","to":"bob","message":"x","timeout":0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001}"#,
        #"{"cmd":"send","to":"bob","message":"x","extra":{"a":1}}"#,
        #"{"cmd":"send","to":"bob","message":"x","\u0074o":"carol"}"#,
        #"[1]"#,
        #"{}"#,
    ])
    func anythingElseIsLeftToTheDecoder(line: String) throws {
        #expect(try Self.plain(line) == nil)
    }
}
