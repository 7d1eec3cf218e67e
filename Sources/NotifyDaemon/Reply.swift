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

    static func success<R: Codable & Sendable>(_ id: JSONValue?, _ result: R) -> [UInt8] {
        encode(Response(id: id, result: result))
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
