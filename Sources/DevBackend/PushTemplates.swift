import Foundation
import NotifyProtocol

/// The backend service's payload templates, filled in as the sample fills them: by
/// replacing `$(alertMessage)` and then `$(alertAction)` in the template's text, nothing
/// escaped. So a quote in the text breaks the JSON, and an action placeholder typed in the
/// text is replaced too.
enum PushTemplates {
    static let message = "$(alertMessage)"
    static let action = "$(alertAction)"

    /// The hub's limit on a notification's payload, in UTF-8 bytes.
    static let payloadLimit = 4096

    /// The template for one platform; `android` is the name the backend accepts.
    static func template(platform: String, silent: Bool) -> String {
        switch (platform, silent) {
        case ("apns", false):
            #"{ "aps" : {"alert" : "$(alertMessage)"}, "action" : "$(alertAction)" }"#
        case ("apns", true):
            #"{ "aps" : {"content-available" : 1, "apns-priority": 5, "sound" : "" }, "action" : "$(alertAction)" }"#
        case ("fcm", false):
            // The legacy FCM API's message, as the sample's docs had it before FCM v1.
            #"{ "notification" : { "title" : "PushDemo", "body" : "$(alertMessage)"}, "data" : { "action" : "$(alertAction)" } }"#
        case ("fcm", true):
            #"{ "data" : {"message" : "$(alertMessage)", "action" : "$(alertAction)"} }"#
        case (_, false):
            #"{ "message" : { "notification" : { "title" : "PushDemo", "body" : "$(alertMessage)"}, "data" : { "action" : "$(alertAction)" } } }"#
        case (_, true):
            #"{ "message" : { "data" : {"message" : "$(alertMessage)", "action" : "$(alertAction)"} } }"#
        }
    }

    /// `template.Replace(message, text).Replace(action, action)`; a null text or action
    /// replaces with nothing, as .NET's Replace does. `escaping` models a fixed backend.
    static func payload(platform: String, silent: Bool, text: String?, action: String?, escaping: Bool) -> String {
        let text = text ?? ""
        let action = action ?? ""
        return template(platform: platform, silent: silent)
            .replacingOccurrences(of: message, with: escaping ? JSONStringText.escaped(text) : text)
            .replacingOccurrences(of: Self.action, with: escaping ? JSONStringText.escaped(action) : action)
    }

    /// Where the Android payload keeps the text and the action.
    static func paths(android: String, silent: Bool) -> (text: [String], action: [String]) {
        switch (android, silent) {
        case ("fcm", false): (["notification", "body"], ["data", "action"])
        case ("fcm", true): (["data", "message"], ["data", "action"])
        case (_, false): (["message", "notification", "body"], ["message", "data", "action"])
        case (_, true): (["message", "data", "message"], ["message", "data", "action"])
        }
    }

    /// The payload as the hub parses it: a JSON object within the size limit, or why not.
    static func parse(_ payload: String) -> Result<JSONValue, Refusal> {
        let size = payload.utf8.count
        guard size <= payloadLimit else {
            return .failure(Refusal("\(size) bytes, over the \(payloadLimit)-byte limit"))
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8)),
              case .object = value
        else { return .failure(Refusal("not a JSON object")) }
        return .success(value)
    }

    /// The string at the end of `path`, or nil.
    static func string(in value: JSONValue, at path: [String]) -> String? {
        var current = value
        for key in path {
            guard let next = current[key] else { return nil }
            current = next
        }
        return current.stringValue
    }

    struct Refusal: Error {
        var reason: String

        init(_ reason: String) {
            self.reason = reason
        }
    }
}
