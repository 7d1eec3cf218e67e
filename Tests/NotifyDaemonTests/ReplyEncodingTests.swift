import NotifyCoding
import Foundation
@testable import NotifyDaemon
import NotifyProtocol
import Testing

/// Replies are framed by hand; for any id the encoder can write, they must be byte for
/// byte what the encoder writes.
@Suite struct ReplyEncodingTests {
    static let ids: [JSONValue?] = [
        nil, .number(7), .number(-3), .number(1.5), .number(1e300), .string("a \"quoted\" / \\ id\n"), .string("é😀"),
        .bool(true), .null, .array([.number(1), .string("x")]), .object(["b": .number(2), "a": .array([])]),
    ]

    static func requestID(_ id: JSONValue?) throws -> RequestID? {
        try id.map { RequestID(json: try WireCoding.encoder().encode($0)) }
    }

    @Test(arguments: ids)
    func successRepliesMatchTheEncoder(id: JSONValue?) throws {
        let result = PingResult(version: "1.2.3", protocol: 1, pid: 42)
        let expected = Array(try WireCoding.line(Response(id: id, result: result)))
        #expect(String(decoding: Reply.success(try Self.requestID(id), result), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test(arguments: ids)
    func errorRepliesMatchTheEncoder(id: JSONValue?) throws {
        let error = WireError(code: .invalidArgument, message: "a \"bad\" token\n")
        let expected = Array(try WireCoding.line(Response<EmptyResult>(id: id, error: error)))
        #expect(String(decoding: Reply.failure(try Self.requestID(id), error), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }
}
