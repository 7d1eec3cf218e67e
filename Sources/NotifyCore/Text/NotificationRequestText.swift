#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The body of a notification request to the backend service, made so that the phone
/// shows exactly the text that was typed.
///
/// The sample pastes `text` and `action` into its hub templates without escaping, and
/// sends every request to Apple and Google alike: a quote or a backslash broke the JSON
/// and the hub refused it (422). With `.tutorial` notifyd escapes both for a JSON string
/// first; with `.none` the backend is trusted to. The request itself is always valid JSON.
public enum NotificationRequestText {
    /// The sample's templates, as the text around `$(alertMessage)` and `$(alertAction)`,
    /// for each platform; Apple's silent one leaves the message out.
    struct Template {
        var platform: Platform
        var parts: [String]
        var fields: [Field]

        enum Field { case text, action }

        func size(text: Int, action: Int) -> Int {
            parts.reduce(0) { $0 + $1.utf8.count } + fields.reduce(0) { $0 + ($1 == .text ? text : action) }
        }
    }

    static func templates(silent: Bool) -> [Template] {
        silent
            ? [Template(platform: .fcmv1, parts: [#"{ "message" : { "data" : {"message" : ""#, #"", "action" : ""#, #""} } }"#], fields: [.text, .action]),
               Template(platform: .apns, parts: [#"{ "aps" : {"content-available" : 1, "apns-priority": 5, "sound" : "" }, "action" : ""#, #"" }"#], fields: [.action])]
            : [Template(platform: .fcmv1, parts: [#"{ "message" : { "notification" : { "title" : "PushDemo", "body" : ""#, #""}, "data" : { "action" : ""#, #"" } } }"#],
                        fields: [.text, .action]),
               Template(platform: .apns, parts: [#"{ "aps" : {"alert" : ""#, #""}, "action" : ""#, #"" }"#], fields: [.text, .action])]
    }

    /// The request's JSON: `text` and `action` escaped for the templates (`escaping`), the
    /// tags any of which a device must have.
    public static func body(text: String, action: String, tags: [String], silent: Bool, escaping: NotificationText.Escaping) -> String {
        let (text, action) = escaped(text: text, action: action, escaping: escaping)
        var json = JSONTextWriter(pretty: false, escapingSlashes: true, capacity: 96 + text.utf8.count + action.utf8.count)
        json.beginObject()
        json.key("text")
        json.string(text)
        json.key("action")
        json.string(action)
        json.key("tags")
        json.strings(tags)
        json.key("silent")
        json.bool(silent)
        json.endObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Refuses a message that cannot fit once the backend pasted it into a template,
    /// saying by how much (the hub takes 4 KB on either platform).
    public static func checkSize(text: String, action: String, silent: Bool) throws(CoreError) {
        let (text, action) = escaped(text: text, action: action, escaping: .tutorial)
        for template in templates(silent: silent) {
            let size = template.size(text: text.utf8.count, action: action.utf8.count)
            let limit = NotificationText.payloadLimit(template.platform)
            if size > limit {
                throw .messageTooLarge("the message is too long for \(template.platform): in the backend's template, escaped, the payload is \(size) bytes, "
                                       + "and \(template.platform) accepts \(limit); shorten it by at least \(ByteText.exact(size - limit))")
            }
        }
    }

    /// The sample replaces `$(alertMessage)`, then `$(alertAction)`, in the template's text:
    /// a text holding the second would have the action pasted into it. A `$` escaped as
    /// `\u0024` is the same character once the JSON is read, and no placeholder.
    private static func escaped(text: String, action: String, escaping: NotificationText.Escaping) -> (String, String) {
        guard escaping == .tutorial else { return (text, action) }
        let escapedText = JSONStringText.escaped(text)
        let placeholderFree = escapedText.contains("$") ? escapedText.split(separator: "$", omittingEmptySubsequences: false).joined(separator: "\\u0024") : escapedText
        return (placeholderFree, JSONStringText.escaped(action))
    }
}
