import Foundation
@testable import NotifyDaemon
import NotifyProtocol
import Testing

/// Success replies are framed by hand; they must be byte for byte what the encoder writes.
@Suite struct ReplyEncodingTests {
    @Test(arguments: [nil, .number(7), .number(-3), .number(1.5), .number(1e300), .string("a \"quoted\" / \\ id\n"), .string("é😀"),
                      .bool(true), .null, .array([.number(1), .string("x")]), .object(["b": .number(2), "a": .array([])])] as [JSONValue?])
    func successRepliesMatchTheEncoder(id: JSONValue?) throws {
        let result = PingResult(version: "1.2.3", protocol: 1, pid: 42)
        let expected = Array(try WireCoding.line(Response(id: id, result: result)))
        #expect(String(decoding: Reply.success(id, result), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }
}
