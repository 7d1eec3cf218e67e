/// Turns a `DecodingError` about a request's parameters into a sentence for a person.
enum DecodingErrorText {
    static func describe(_ error: any Error, command: String) -> String {
        guard let error = error as? DecodingError else { return "invalid parameters for \(command)" }
        switch error {
        case .keyNotFound(let key, _):
            return "\(command) needs \"\(key.stringValue)\""
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(command): \"\(path(context))\" must be \(name(of: type))"
        case .dataCorrupted(let context) where context.codingPath.isEmpty && context.debugDescription.contains("not valid JSON"):
            // The line is JSON (checked before it is decoded): what the decoder refuses so,
            // naming no field, is a number a field cannot hold.
            return "\(command): a number in it does not fit its field: out of range, or with a fraction where a whole number is needed"
        case .dataCorrupted(let context):
            let field = path(context)
            return field.isEmpty ? "\(command): \(context.debugDescription)" : "\(command): \"\(field)\" has an invalid value (\(context.debugDescription))"
        @unknown default:
            return "invalid parameters for \(command)"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Double.Type, is Int.Type: "a number"
        case is [String].Type, is [Any].Type: "an array"
        default: "of another type"
        }
    }
}
