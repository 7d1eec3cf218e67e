import NotifyProtocol

/// An Android name a backend refused a registration under with 400. The tutorial's
/// RegisterController answers so only from the default of its platform switch, so this is
/// proof that the backend does not know the name; Android's are the only names that
/// differ between its versions (every one knows apns and wns, whose 400 is left to mean
/// a bad registration). Its NotificationsController answers a send under a name it does
/// not know with a 500 that looks like an outage; with this proof in hand, such a 500 is
/// the unknown name, and is not retried (`UnknownPlatforms`).
public struct RefusedPlatform: Codable, Equatable, Sendable {
    public var backend: String
    /// The name as the backend was given it (`Platform.atBackend`).
    public var platform: Platform
    /// The start of the backend's answer, for a person (`Unsupported platform`, or nothing).
    public var detail: String

    public init(backend: String, platform: Platform, detail: String) {
        self.backend = backend
        self.platform = platform
        self.detail = detail
    }

    /// How many are kept: Android's few names at a few backends; the oldest goes first.
    static let mostKept = 16

    /// Whether a refusal of `platform` with `status` shows that the backend does not know it.
    static func proves(status: Int, platform: Platform) -> Bool { status == 400 && platform.isAndroid }

    /// What the backend does not know, and how notifyd knows it, said of the backend.
    var doesNotKnow: String {
        "does not know Android under the name '\(platform)' (it refused a registration under that name: HTTP 400"
            + (detail.isEmpty ? ")" : ": \(detail))")
    }

    /// The setting that fixes it.
    var fix: String { AndroidNameAdvice.refused(platform) }

    /// Why the backend refused, and the setting that fixes it.
    public var advice: String { "the backend \(doesNotKnow); \(fix)" }
}

/// What to set when a backend refuses Android under one of its names, and why the legacy
/// names are a last resort: Google retired the legacy FCM API on 20 June 2024.
public enum AndroidNameAdvice {
    static let reload = "in notifyd's config file (`notifyd --check-config` names it), then run `notifyctl reload`"
    static let legacyDelivers = "Google no longer delivers there: its legacy FCM API was retired on 20 June 2024"

    /// The setting that fixes a refusal of `name`.
    static func refused(_ name: Platform) -> String {
        switch name {
        case .fcmv1:
            return "a backend that predates FCM v1 knows it as fcm (the oldest tutorial, as gcm): set `android_name = fcm` \(reload); "
                + "but \(legacyDelivers), so Android devices get nothing until the backend is updated for FCM v1"
        case .fcm:
            return "a backend updated for FCM v1 knows it as fcmv1 (the oldest tutorial, as gcm): set `android_name = fcmv1` (the default) \(reload)"
        default:
            return "a backend updated for FCM v1 knows it as fcmv1, and one that predates it as fcm: set `android_name = fcmv1` (the default) or `fcm` \(reload)"
        }
    }

    /// The warning for a registration under a legacy name, which the user chose.
    public static func legacy(_ name: Platform) -> String {
        "registered under the legacy name '\(name)' (android_name = \(name)), but \(legacyDelivers); "
            + "once the backend is updated for FCM v1, set `android_name = fcmv1` (the default) \(reload)"
    }
}
