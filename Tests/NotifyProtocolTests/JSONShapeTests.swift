import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// The guard in front of `JSONDecoder`: everything valid passes, everything else is refused
/// with a position, and nesting stops at the limit whatever the input.
@Suite struct JSONShapeTests {
    @Test(arguments: [
        "{}", "[]", "0", "-0", "1.5e-3", "12E+2", "true", "false", "null", "\"\"",
        " {\"cmd\" : \"ping\", \"id\" : [1, {\"a\": null}] } ",
        "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00\"",
        "\"é 日本 😀\"",
    ])
    func acceptsValidJSON(_ text: String) throws {
        try JSONShape.check(Array(text.utf8))
        // And the decoder agrees that it is JSON.
        _ = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test(arguments: [
        "", " ", "{", "[", "[1,]", "{\"a\":1,}", "{\"a\"}", "{a:1}", "01", "1.", "-", "1e", ".5", "+1",
        "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"a\u{01}b\"", "{} {}", "[1] x", "'a'",
        "{\"cmd\":\"ping\",\"id\":",
    ])
    func refusesInvalidJSON(_ text: String) {
        #expect(throws: JSONShape.Problem.self) { try JSONShape.check(Array(text.utf8)) }
    }

    @Test func refusesInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]] {
            #expect(throws: JSONShape.Problem.self, "\(bytes)") { try JSONShape.check(bytes) }
        }
    }

    @Test func nestingStopsAtTheLimitForArraysAndObjects() throws {
        let limit = JSONShape.maximumDepth
        try JSONShape.check(Array((String(repeating: "[", count: limit) + String(repeating: "]", count: limit)).utf8))
        let tooDeep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: JSONShape.Problem(offset: limit, reason: "nested deeper than \(limit) levels")) { try JSONShape.check(Array(tooDeep.utf8)) }
        let objects = String(repeating: "{\"a\":", count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        #expect(throws: JSONShape.Problem.self) { try JSONShape.check(Array(objects.utf8)) }
    }

    /// The inputs that crash Foundation's decoder: 512, 513 and 514 `[`, bare and as an id.
    @Test(arguments: [511, 512, 513, 514, 100_000])
    func deepOpenBracketsAreRefusedWithoutCrashing(count: Int) {
        let bare = Array(repeating: UInt8(ascii: "["), count: count)
        #expect(throws: JSONShape.Problem.self) { try JSONShape.check(bare) }
        let asID = Array("{\"cmd\":\"ping\",\"id\":".utf8) + bare
        #expect(throws: JSONShape.Problem.self) { try WireCoding.decodeChecked(JSONValue.self, from: asID) }
    }

    @Test func problemsNameTheirPosition() {
        #expect(throws: JSONShape.Problem(offset: 7, reason: "expected ',' or '}'")) { try JSONShape.check(Array("{\"a\":1 2}".utf8)) }
        #expect(throws: JSONShape.Problem(offset: 3, reason: "unexpected end of input")) { try JSONShape.check(Array("[1,".utf8)) }
        #expect(JSONShape.Problem(offset: 0, reason: "expected a value").description == "expected a value at byte 1")
    }

    @Test func worksOnSlicesAndData() throws {
        let bytes = Array("xx{\"a\":[1]}yy".utf8)
        try JSONShape.check(bytes[2..<11])
        try JSONShape.check(Data("{\"a\":[1]}".utf8))
        #expect(throws: JSONShape.Problem.self) { try JSONShape.check(bytes[2..<12]) }
    }

    @Test func findsTheTopLevelIDAsWritten() throws {
        func id(_ text: String) throws -> String? {
            let bytes = Array(text.utf8)
            return try JSONShape.check(bytes).idRange.map { String(decoding: bytes[$0], as: UTF8.self) }
        }
        #expect(try id(#"{"cmd":"ping","id":9007199254740993}"#) == "9007199254740993")
        #expect(try id(#"{ "id" : [1, {"id": 2}] , "cmd":"x"}"#) == #"[1, {"id": 2}]"#)
        #expect(try id(#"{"id":1,"id":"two"}"#) == #""two""#)
        #expect(try id(#"{"cmd":{"id":1}}"#) == nil, "only the top level")
        #expect(try id(#"[{"id":1}]"#) == nil)
        #expect(try id(#"{"idx":1,"i":2}"#) == nil)
        #expect(try id(#"{"id":null}"#) == "null")
    }
}
