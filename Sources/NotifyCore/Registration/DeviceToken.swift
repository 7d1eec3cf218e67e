#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Device tokens ("handles") as the backend wants them.
public enum DeviceToken {
    /// APNs: hex in any case, with or without spaces and `<>` (the old `[token description]`
    /// form), becomes uppercase hex. FCM/GCM tokens and WNS channel URIs are opaque and kept
    /// as given, but must be non-empty and free of whitespace and control characters.
    public static func normalize(_ raw: String, for platform: Platform) throws(CoreError) -> String {
        switch platform {
        case .apns:
            return try normalizeAPNs(raw)
        case .fcm, .gcm, .wns:
            return try checkOpaque(raw, platform: platform)
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
                    + " (for an FCM, GCM or WNS token, add --platform fcm, gcm or wns)")
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

    private static func checkOpaque(_ raw: String, platform: Platform) throws(CoreError) -> String {
        guard !raw.isEmpty else {
            throw .invalidArgument("the \(platform) token is empty")
        }
        if let bad = raw.unicodeScalars.first(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
            let apns = (try? normalizeAPNs(raw)) != nil ? "; this one looks like an APNs token: add --platform apns" : ""
            throw .invalidArgument("\(platform.rawValue.uppercased()) tokens may not contain whitespace or control characters (found U+\(String(bad.value, radix: 16, uppercase: true)))\(apns)")
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

    public static func validate(_ tags: [String]) throws(CoreError) -> [String] {
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
            if tag.lowercased().hasPrefix("username:") {
                throw .invalidArgument("tag '\(tag)' is reserved: the backend adds username:<you> by itself")
            }
            if seen.insert(tag).inserted { result.append(tag) }
        }
        return result
    }
}
