/// Builds the native payload the way the tutorial's NotificationsController does:
/// by string concatenation.
enum PayloadBuilder {
    /// `"From " + user + ": " + message`, escaped for the payload format only when
    /// modelling a fixed backend (`escaping`).
    static func payload(service: NotificationService, sender: String, message: String, escaping: Bool) -> String {
        let text = "From " + sender + ": " + message
        switch service {
        case .apns:
            let pasted = escaping ? escapedForJSONString(text) : text
            return "{\"aps\":{\"alert\":\"" + pasted + "\"}}"
        case .android:
            let pasted = escaping ? escapedForJSONString(text) : text
            return "{ \"data\" : {\"message\":\"" + pasted + "\"}}"
        case .wns:
            let pasted = escaping ? escapedForXML(text) : text
            return "<toast><visual><binding template=\"ToastText01\"><text id=\"1\">" + pasted
                + "</text></binding></visual></toast>"
        }
    }

    /// The escaping a JSON serializer applies inside a string literal.
    static func escapedForJSONString(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16, uppercase: false)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The five predefined XML entities; enough for text content and attributes.
    static func escapedForXML(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }
}
