#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Turns what a user typed into the body notifyd sends, so that the phone shows exactly
/// that text.
///
/// The tutorial backend builds each payload by pasting `From <sender>: <message>` into a
/// JSON string (APNs, FCM v1, FCM) or an XML element (WNS) without escaping. With `.tutorial`
/// notifyd escapes the text for that context first, so quotes, backslashes, newlines,
/// `<` and `&` arrive intact; with `.none` the backend is trusted to escape by itself.
/// Either way the HTTP body is a properly JSON-encoded string.
///
/// `platform` is always the platform as the backend knows it (`Platform.atBackend`): it
/// wraps a send under any of Android's names in the template of `android_name`.
public enum NotificationText {
    public enum Escaping: String, Sendable, CaseIterable {
        case tutorial
        case none
    }

    /// What the platform accepts, whole payload included (Apple: 4096 bytes; FCM data:
    /// 4096 bytes; a Notification Hubs FCM v1 notification: 4 KB; WNS: 5 KB).
    public static func payloadLimit(_ platform: Platform) -> Int {
        switch platform {
        case .apns, .fcmv1, .fcm, .gcm: 4096
        case .wns: 5120
        }
    }

    /// The text to put in the request body for `platform`.
    public static func body(_ message: String, for platform: Platform, escaping: Escaping) throws(CoreError) -> String {
        let escaped = try escape(message, for: platform)
        return escaping == .tutorial ? escaped : message
    }

    /// The payload the backend will build, as the push service receives it. The same
    /// whether notifyd or a fixed backend does the escaping.
    public static func payload(_ message: String, sender: String, for platform: Platform) throws(CoreError) -> String {
        let text = "From \(sender): " + (try escape(message, for: platform))
        if let wrapper = jsonWrapper(platform) { return wrapper.before + text + wrapper.after }
        return #"<toast><visual><binding template="ToastText01"><text id="1">"# + text + "</text></binding></visual></toast>"
    }

    /// What the backend's JSON templates put around the text, as its controller writes them;
    /// nil for WNS's XML.
    static func jsonWrapper(_ platform: Platform) -> (before: String, after: String)? {
        switch platform {
        case .apns: (#"{"aps":{"alert":""#, #""}}"#)
        case .fcmv1: (#"{ "message":{"data" : {"message":""#, #""}}}"#)
        case .fcm, .gcm: (#"{ "data" : {"message":""#, #""}}"#)
        case .wns: nil
        }
    }

    /// `payload(...).utf8.count`, added up for JSON payloads instead of pasted together
    /// once per message only to be measured.
    static func payloadSize(_ message: String, sender: String, for platform: Platform) throws(CoreError) -> Int {
        guard let wrapper = jsonWrapper(platform) else { return try payload(message, sender: sender, for: platform).utf8.count }
        return wrapper.before.utf8.count + wrapper.after.utf8.count + "From ".utf8.count + sender.utf8.count + ": ".utf8.count + (try escape(message, for: platform)).utf8.count
    }

    /// Refuses a message that cannot fit once the backend has wrapped it, saying by how much.
    public static func checkSize(_ message: String, sender: String, for platform: Platform) throws(CoreError) {
        let size = try payloadSize(message, sender: sender, for: platform)
        let limit = payloadLimit(platform)
        if size > limit {
            throw .messageTooLarge("the message is too long for \(platform): with the backend's wrapper and escaping the payload is \(size) bytes, and \(platform) accepts \(limit); shorten it by at least \(ByteText.exact(size - limit))")
        }
    }

    static func escape(_ message: String, for platform: Platform) throws(CoreError) -> String {
        switch platform {
        case .apns, .fcmv1, .fcm, .gcm: return JSONStringText.escaped(message)
        case .wns: return try xmlText(message)
        }
    }

    /// XML character data. XML 1.0 cannot carry most control characters at all, escaped
    /// or not, so those are refused rather than silently dropped.
    static func xmlText(_ text: String) throws(CoreError) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            // XML parsers turn a literal CR into LF; a character reference survives.
            case "\r": result += "&#13;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                throw .invalidArgument("the message contains the control character U+\(CFormat.string("%04X", scalar.value)), which a WNS toast cannot carry")
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
