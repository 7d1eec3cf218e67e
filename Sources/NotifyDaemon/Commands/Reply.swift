#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyCoding
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

    /// `{"id":…,"ok":true,"result":…}` and `{"error":…,"id":…,"ok":false}`: keys in the
    /// encoder's sorted order, the id as the client wrote it. The envelope is written by
    /// hand: the encoder spent half a ping's time wrapping the result.
    static func success<R: Codable & Sendable>(_ id: RequestID?, _ result: R) -> [UInt8] {
        guard let body = encodedResult(result) else { return unencodable(id) }
        return success(id, encodedResult: body)
    }

    /// A send's reply, written without the encoder (`SendResult.wireJSON`): one per message.
    static func success(_ id: RequestID?, _ result: SendResult) -> [UInt8] {
        guard let body = result.wireJSON ?? encodedResult(result) else { return unencodable(id) }
        return success(id, encodedResult: body)
    }

    /// A result as the wire carries it, for a reply made now or kept to be sent again;
    /// nil for one that cannot be encoded (a non-finite number).
    static func encodedResult<R: Encodable>(_ result: R) -> [UInt8]? {
        (try? WireCoding.encoder().encode(result)).map(Array.init)
    }

    /// The reply to a request whose result `encodedResult` could not encode.
    static func unencodable(_ id: RequestID?) -> [UInt8] {
        failure(id, WireError(code: .internalError, message: "the reply could not be encoded"))
    }

    /// The same around a result already encoded (one that never changes, like ping's).
    static func success<Body: Collection<UInt8>>(_ id: RequestID?, encodedResult body: Body) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(body.count + (id?.json.count ?? 0) + 32)
        line.append(UInt8(ascii: "{"))
        if let id {
            line.append(contentsOf: #""id":"#.utf8)
            line.append(contentsOf: id.json)
            line.append(UInt8(ascii: ","))
        }
        line.append(contentsOf: #""ok":true,"result":"#.utf8)
        line.append(contentsOf: body)
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    static func failure(_ id: RequestID?, _ error: WireError) -> [UInt8] {
        let body = (try? WireCoding.encoder().encode(error)) ?? Data(#"{"code":"internal_error","message":"the error could not be encoded"}"#.utf8)
        var line: [UInt8] = []
        line.reserveCapacity(body.count + (id?.json.count ?? 0) + 32)
        line.append(contentsOf: #"{"error":"#.utf8)
        line.append(contentsOf: body)
        if let id {
            line.append(contentsOf: #","id":"#.utf8)
            line.append(contentsOf: id.json)
        }
        line.append(contentsOf: #","ok":false}"#.utf8)
        line.append(contentsOf: "\n".utf8)
        return line
    }

    static func failure(_ id: RequestID?, _ error: CoreError) -> [UInt8] {
        failure(id, error.wireError)
    }
}
