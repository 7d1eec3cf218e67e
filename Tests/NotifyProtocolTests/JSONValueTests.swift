import Foundation
import NotifyProtocol
import Testing

/// A request id is echoed exactly as the client sent it.
struct JSONValueTests {
    @Test(arguments: [
        (JSONValue.number(7), "7"),
        (.number(0), "0"),
        (.number(-3), "-3"),
        (.number(1_234_567_890_123), "1234567890123"),
        (.number(7.5), "7.5"),
        (.string("7"), #""7""#),
        (.string("abc"), #""abc""#),
        (.bool(true), "true"),
        (.null, "null"),
    ])
    func encodesIdsAsGiven(value: JSONValue, expected: String) throws {
        #expect(try WireText.encode(value) == expected)
    }

    @Test func wholeNumberIdEchoesWithoutAFraction() throws {
        let header = try WireText.decode(RequestHeader.self, #"{"id":7,"cmd":"ping"}"#)
        #expect(header.id == .number(7))
        let reply = try WireText.encode(Response(id: header.id, result: EmptyResult()))
        #expect(reply == #"{"id":7,"ok":true,"result":{}}"#)
    }

    @Test func stringIdStaysAString() throws {
        let header = try WireText.decode(RequestHeader.self, #"{"id":"7","cmd":"ping"}"#)
        #expect(header.id == .string("7"))
        #expect(try WireText.encode(Response(id: header.id, result: EmptyResult())) == #"{"id":"7","ok":true,"result":{}}"#)
    }

    @Test func structuredIdEchoesUnchanged() throws {
        let header = try WireText.decode(RequestHeader.self, #"{"cmd":"ping","id":{"seq":[1,"two",false,null]}}"#)
        #expect(try WireText.encode(Response(id: header.id, result: EmptyResult()))
            == #"{"id":{"seq":[1,"two",false,null]},"ok":true,"result":{}}"#)
    }

    @Test func numbersAndBooleansAreNotConfused() throws {
        #expect(try WireText.parse("1") == .number(1))
        #expect(try WireText.parse("0") == .number(0))
        #expect(try WireText.parse("true") == .bool(true))
        #expect(try WireText.parse("false") == .bool(false))
    }

    @Test func decodesEveryKind() throws {
        let value = try WireText.parse(#"{"a":null,"b":[1.5,"s",true],"c":{"d":-2}}"#)
        #expect(value == .object([
            "a": .null,
            "b": .array([.number(1.5), .string("s"), .bool(true)]),
            "c": .object(["d": .number(-2)]),
        ]))
    }

    @Test func largeNumbersRoundTrip() throws {
        for number in [1e20, -9.5e15, 123.456e10] {
            let text = try WireText.encode(JSONValue.number(number))
            #expect(try WireText.parse(text) == .number(number), "\(text)")
        }
    }

    @Test func subscriptAndStringValue() {
        let value = JSONValue.object(["name": .string("bob"), "n": .number(1)])
        #expect(value["name"] == .string("bob"))
        #expect(value["name"]?.stringValue == "bob")
        #expect(value["n"]?.stringValue == nil)
        #expect(value["missing"] == nil)
        #expect(JSONValue.array([.string("x")])["x"] == nil)
        #expect(JSONValue.string("x").stringValue == "x")
    }
}
