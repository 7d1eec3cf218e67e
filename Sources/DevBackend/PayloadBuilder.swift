import NotifyProtocol
/// Builds the native payload the way the tutorial's NotificationsController does:
/// by string concatenation.
enum PayloadBuilder {
    /// `"From " + user + ": " + message`, escaped for the payload format only when
    /// modelling a fixed backend (`escaping`).
    static func payload(service: NotificationService, sender: String, message: String, escaping: Bool) -> String {
        let text = "From " + sender + ": " + message
        switch service {
        case .apns:
            let pasted = escaping ? JSONStringText.escaped(text) : text
            return "{\"aps\":{\"alert\":\"" + pasted + "\"}}"
        case .android:
            let pasted = escaping ? JSONStringText.escaped(text) : text
            return "{ \"data\" : {\"message\":\"" + pasted + "\"}}"
        case .fcmV1:
            let pasted = escaping ? JSONStringText.escaped(text) : text
            return "{ \"message\":{\"data\" : {\"message\":\"" + pasted + "\"}}}"
        case .wns:
            let pasted = escaping ? escapedForXML(text) : text
            return "<toast><visual><binding template=\"ToastText01\"><text id=\"1\">" + pasted
                + "</text></binding></visual></toast>"
        }
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
