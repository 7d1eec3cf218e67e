import Foundation
import NotifyCore
import NotifyProtocol

/// A reply line, ready now or once something the command waits for has happened.
/// Commands change state in the order they arrive; only their waiting overlaps.
enum Reply: Sendable {
    case now([UInt8])
    case later(@Sendable () async -> [UInt8])

    func resolve() async -> [UInt8] {
        switch self {
        case .now(let bytes): bytes
        case .later(let produce): await produce()
        }
    }

    /// `{"id":…,"ok":true,"result":…}`, keys in the encoder's sorted order. The envelope is
    /// written by hand: the encoder spent half a ping's time wrapping the result.
    static func success<R: Codable & Sendable>(_ id: JSONValue?, _ result: R) -> [UInt8] {
        let encoder = WireCoding.encoder()
        guard let body = try? encoder.encode(result) else { return encode(Response(id: id, result: result)) }
        var line: [UInt8] = []
        line.reserveCapacity(body.count + 40)
        line.append(UInt8(ascii: "{"))
        if let id {
            guard let idText = encodedID(id, encoder) else { return encode(Response(id: id, result: result)) }
            line.append(contentsOf: #""id":"#.utf8)
            line.append(contentsOf: idText)
            line.append(UInt8(ascii: ","))
        }
        line.append(contentsOf: #""ok":true,"result":"#.utf8)
        line.append(contentsOf: body)
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    private static func encodedID(_ id: JSONValue, _ encoder: JSONEncoder) -> [UInt8]? {
        if case .number(let value) = id, value.rounded() == value, abs(value) < 9.0e15 {
            return Array(String(Int64(value)).utf8)
        }
        return (try? encoder.encode(id)).map(Array.init)
    }

    static func failure(_ id: JSONValue?, _ error: WireError) -> [UInt8] {
        encode(Response<EmptyResult>(id: id, error: error))
    }

    static func failure(_ id: JSONValue?, _ error: CoreError) -> [UInt8] {
        failure(id, error.wireError)
    }

    private static func encode<R>(_ response: Response<R>) -> [UInt8] {
        if let line = try? WireCoding.line(response) { return Array(line) }
        // Only a result that cannot be encoded (a non-finite number) gets here.
        let fallback = Response<EmptyResult>(id: response.id, error: WireError(code: .internalError, message: "the reply could not be encoded"))
        return Array((try? WireCoding.line(fallback)) ?? Data("{\"ok\":false}\n".utf8))
    }
}
