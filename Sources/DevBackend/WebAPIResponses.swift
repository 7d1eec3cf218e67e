import Foundation

/// Responses shaped like the ones ASP.NET Web API gives the tutorial's clients.
enum WebAPIResponses {
    /// 200 with no content: what `Request.CreateResponse(HttpStatusCode.OK)` sends.
    static let ok = HTTPResponse(status: 200)

    /// An empty response with `status`, as from `HttpResponseException(status)` or
    /// `Request.CreateResponse(status)`.
    static func empty(_ status: Int) -> HTTPResponse {
        HTTPResponse(status: status)
    }

    /// `BadRequest(message)`: 400 with Web API's error object.
    static func badRequest(_ message: String) -> HTTPResponse {
        .json(400, encode(ErrorBody(message: message, exceptionMessage: nil, exceptionType: nil)))
    }

    /// An unhandled exception: 500 with Web API's error object. Details are included
    /// because Web API shows them to local clients, and this backend is local.
    static func exception(_ type: String, _ message: String) -> HTTPResponse {
        let error = ErrorBody(
            message: "An error has occurred.", exceptionMessage: message, exceptionType: type
        )
        return .json(500, encode(error))
    }

    static func notFound(target: String) -> HTTPResponse {
        let error = ErrorBody(
            message: "No HTTP resource was found that matches the request URI '\(target)'.",
            exceptionMessage: nil, exceptionType: nil
        )
        return .json(404, encode(error))
    }

    /// The status an injected fault chose; the body says where it came from.
    static func injected(_ status: Int) -> HTTPResponse {
        .json(status, encode(ErrorBody(message: "Injected fault", exceptionMessage: nil, exceptionType: nil)))
    }

    /// A JSON string body, as the register POST returns its `string` result.
    static func jsonString(_ text: String) -> HTTPResponse {
        .json(200, encode(text))
    }

    private struct ErrorBody: Encodable {
        var message: String
        var exceptionMessage: String?
        var exceptionType: String?

        enum CodingKeys: String, CodingKey {
            case message = "Message"
            case exceptionMessage = "ExceptionMessage"
            case exceptionType = "ExceptionType"
        }
    }

    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only plain strings, numbers and arrays of them go through here.
        return Array((try? encoder.encode(value)) ?? Data("null".utf8))
    }
}
