#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Device tokens ("handles") as the backend wants them.
public enum DeviceToken {
    /// Each platform's token by its published shape, refused with the rule it broke:
    /// APNs, an even number of hex digits (whole bytes; 64 today, but Apple says not to
    /// count on the length), in any case, with or without spaces and `<>` (the old
    /// `[token description]` form), made uppercase hex; Android (FCM v1, FCM, GCM), a registration token
    /// of letters, digits and `- _ : .` (no spaces, no `<>`); WNS, a channel URI, `https://`
    /// on a host under notify.windows.com. The last two are kept as given.
    public static func normalize(_ raw: String, for platform: Platform) throws(CoreError) -> String {
        switch platform {
        case .apns:
            return try normalizeAPNs(raw)
        case .fcmv1, .fcm, .gcm:
            return try checkRegistrationToken(raw, platform: platform)
        case .wns:
            return try checkChannelURI(raw)
        }
    }

    /// The platform of a token given without `--platform`: `current` (the platform of the
    /// token before, or the configured default), unless the token can only be an APNs one.
    /// `<`, `>` and spaces appear in no FCM, GCM or WNS token, but are the old
    /// `[token description]` form of APNs's: such a token that is whole hex bytes is APNs.
    public static func platform(of raw: String, current: Platform) -> Platform {
        guard current != .apns, raw.contains(where: { apnsDecoration.contains($0) }),
              (try? normalizeAPNs(raw)) != nil else { return current }
        return .apns
    }

    private static let apnsDecoration: Set<Character> = [" ", "<", ">", "\t"]

    private static func normalizeAPNs(_ raw: String) throws(CoreError) -> String {
        var hex = ""
        for character in raw {
            if apnsDecoration.contains(character) { continue }
            guard character.isASCII, character.isHexDigit else {
                throw .invalidArgument("an APNs token is hexadecimal (0-9, A-F), optionally with spaces and <>; \(describe(character)) is not allowed"
                    + " (for an FCM token, add --platform fcmv1; for a WNS channel URI, --platform wns)")
            }
            hex.append(character)
        }
        guard !hex.isEmpty else {
            throw .invalidArgument("the APNs token is empty")
        }
        guard hex.count % 2 == 0 else {
            throw .invalidArgument("an APNs token has an even number of hex digits (whole bytes); this one has \(hex.count)")
        }
        return hex.uppercased()
    }

    private static func checkRegistrationToken(_ raw: String, platform: Platform) throws(CoreError) -> String {
        // One token under each of Android's names: the same string serves FCM v1 and the legacy API.
        let name = platform == .gcm ? "a GCM" : "an FCM"
        guard !raw.isEmpty else { throw .invalidArgument("the \(platform.rawValue) token is empty") }
        if let bad = raw.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber)) && !"-_:.".contains($0) }) {
            let apns = (try? normalizeAPNs(raw)) != nil && raw.contains(where: { apnsDecoration.contains($0) })
                ? "; in <…> form it is an APNs token: add --platform apns" : ""
            throw .invalidArgument("\(name) registration token is letters, digits and - _ : . only; \(describe(bad)) is not allowed\(apns)")
        }
        return raw
    }

    /// `https://HOST/…` with HOST notify.windows.com or under it, as WNS hands out.
    private static func checkChannelURI(_ raw: String) throws(CoreError) -> String {
        let rule = "a WNS channel is an https:// URI on a host under notify.windows.com"
        guard !raw.isEmpty else { throw .invalidArgument("the wns token is empty") }
        guard raw.hasPrefix("https://") else { throw .invalidArgument("\(rule); this one does not start with https://") }
        if let bad = raw.unicodeScalars.first(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control || !$0.isASCII }) {
            throw .invalidArgument("\(rule), with no spaces or control characters; found U+\(String(bad.value, radix: 16, uppercase: true))")
        }
        let authority = raw.dropFirst("https://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        guard !authority.contains("@"), host == "notify.windows.com" || host.hasSuffix(".notify.windows.com") else {
            throw .invalidArgument("\(rule); this one's host is '\(host)'")
        }
        return raw
    }

    private static func describe(_ character: Character) -> String {
        if let scalar = character.unicodeScalars.first, scalar.properties.generalCategory == .control || !character.isASCII {
            return "U+" + String(scalar.value, radix: 16, uppercase: true)
        }
        return "'\(character)'"
    }
}

/// Registration tags, checked before they reach the backend (which answers 400 to most
/// punctuation). The Notification Hubs rule: 1 to 120 of letters, digits and `_ @ # . : -`.
public enum RegistrationTags {
    public static let maximumLength = 120
    private static let punctuation: Set<Character> = ["_", "@", "#", ".", ":", "-"]

    /// `forSending`: the tags a send goes to, where `username:<user>` names a recipient
    /// rather than claims one.
    public static func validate(_ tags: [String], forSending: Bool = false) throws(CoreError) -> [String] {
        var seen = Set<String>()
        var result: [String] = []
        for tag in tags {
            guard !tag.isEmpty else { throw .invalidArgument("a tag may not be empty") }
            guard tag.count <= maximumLength else {
                throw .invalidArgument("tag '\(tag.prefix(20))…' is \(tag.count) characters; at most \(maximumLength) are allowed")
            }
            if let bad = tag.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber)) && !punctuation.contains($0) }) {
                throw .invalidArgument("tag '\(tag)' contains \(bad == " " ? "a space" : "'\(bad)'"); tags may hold letters, digits and _ @ # . : - only")
            }
            // The backend adds `username:<user>` itself; a client-chosen one would receive
            // another user's notifications.
            if !forSending, tag.lowercased().hasPrefix("username:") {
                throw .invalidArgument("tag '\(tag)' is reserved: the backend adds username:<you> by itself")
            }
            if seen.insert(tag).inserted { result.append(tag) }
        }
        return result
    }
}
