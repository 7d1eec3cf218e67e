import Foundation
import NotifyProtocol

/// A JSON request body read into a model as ASP.NET Core reads it with System.Text.Json's
/// web defaults: property names matched ignoring case, unknown properties ignored, a value
/// of the wrong type a binding error (the path of the value named, as `$.tags[1]`).
struct ModelBinding {
    private let fields: [String: JSONValue]

    /// What keeps a body from binding, keyed as ASP.NET Core keys its model-state errors.
    struct Failure: Error {
        var key: String
        var message: String
    }

    /// Binds the body to a model parameter named `parameter`; fails unless the body is
    /// one JSON object.
    init(_ body: [UInt8], parameter: String) throws(Failure) {
        guard !body.isEmpty else {
            throw Failure(key: "", message: "A non-empty request body is required.")
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(body)) else {
            throw Failure(key: "$", message: "The JSON value could not be read. Path: $")
        }
        guard case .object(let fields) = value else {
            throw Failure(key: "$", message: "The JSON value could not be converted to the type of \(parameter). Path: $")
        }
        self.fields = fields
    }

    /// nil when absent (the model's default) or null.
    private func value(_ name: String) -> JSONValue? {
        let wanted = name.lowercased()
        let match = fields.first { $0.key == name } ?? fields.first { $0.key.lowercased() == wanted }
        if case .null? = match?.value { return nil }
        return match?.value
    }

    private func isNull(_ name: String) -> Bool {
        let wanted = name.lowercased()
        if case .null? = fields.first(where: { $0.key.lowercased() == wanted })?.value { return true }
        return false
    }

    private func mismatch(_ name: String, _ type: String) -> Failure {
        Failure(key: "$." + name, message: "The JSON value could not be converted to \(type). Path: $.\(name)")
    }

    /// A string property: nil when absent or null.
    func string(_ name: String) throws(Failure) -> String? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value else { throw mismatch(name, "System.String") }
        return text
    }

    /// A bool property: `false` when absent; null is a binding error, a bool not being nullable.
    func bool(_ name: String) throws(Failure) -> Bool {
        if isNull(name) { throw mismatch(name, "System.Boolean") }
        guard let value = value(name) else { return false }
        guard case .bool(let flag) = value else { throw mismatch(name, "System.Boolean") }
        return flag
    }

    /// A string-list property: `[]` when absent (the model's default), nil when null.
    func strings(_ name: String) throws(Failure) -> [String]? {
        if isNull(name) { return nil }
        guard let value = value(name) else { return [] }
        guard case .array(let elements) = value else { throw mismatch(name, "System.String[]") }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else { throw mismatch("\(name)[\(index)]", "System.String") }
            strings.append(text)
        }
        return strings
    }
}

/// Responses shaped like ASP.NET Core's for an `[ApiController]`: results with no body,
/// and the validation problem document.
enum AspNetCoreResponses {
    /// `Ok()`, `BadRequest()`, `Unauthorized()`, `NotFound()`, `UnprocessableEntity()`: no body.
    static func empty(_ status: Int) -> HTTPResponse {
        HTTPResponse(status: status)
    }

    /// The automatic 400 of an invalid model: one entry per field, in the order given.
    static func validationProblem(_ errors: [(key: String, message: String)]) -> HTTPResponse {
        var grouped: [(key: String, messages: [String])] = []
        for error in errors {
            if let index = grouped.firstIndex(where: { $0.key == error.key }) {
                grouped[index].messages.append(error.message)
            } else {
                grouped.append((error.key, [error.message]))
            }
        }
        let entries = grouped.map { entry in
            quoted(entry.key) + ":[" + entry.messages.map(quoted).joined(separator: ",") + "]"
        }
        let body = #"{"type":"https://tools.ietf.org/html/rfc7231#section-6.5.1","title":"One or more validation errors occurred.","status":400,"errors":{"#
            + entries.joined(separator: ",") + "}}"
        return HTTPResponse(
            status: 400,
            headers: [("Content-Type", "application/problem+json; charset=utf-8")],
            body: Array(body.utf8)
        )
    }

    /// A model that could not be bound at all: its parameter is missing too.
    static func bindingProblem(_ failure: ModelBinding.Failure, parameter: String) -> HTTPResponse {
        validationProblem([(failure.key, failure.message), (parameter, "The \(parameter) field is required.")])
    }

    /// `[Required]` on a string: null, empty and white space all fail it.
    static func isMissing(_ text: String?) -> Bool {
        text?.allSatisfy(\.isWhitespace) ?? true
    }

    private static func quoted(_ text: String) -> String {
        "\"" + JSONStringText.escaped(text) + "\""
    }
}
