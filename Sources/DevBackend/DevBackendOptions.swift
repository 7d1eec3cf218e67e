extension DevBackend {
    /// Which name the upsert route accepts for Android devices, and with it which revision
    /// of the tutorial's controllers this backend is. The tutorial's older revisions switch
    /// on "gcm", newer ones on "fcm"; real deployments run either. `fcmv1` is the tutorial
    /// as updated for FCM v1, the one that still reaches Android phones: it knows `wns`,
    /// `apns` and `fcmv1` only, in registrations and sends alike.
    public enum AndroidPlatformName: String, Codable, Sendable, CaseIterable {
        case fcm
        case gcm
        /// Accept both names, as a backend patched for the migration would.
        case both
        case fcmv1

        var acceptedNames: Set<String> {
            switch self {
            case .fcm: ["fcm"]
            case .gcm: ["gcm"]
            case .both: ["fcm", "gcm"]
            case .fcmv1: ["fcmv1"]
            }
        }

        /// The updated RegisterController: a lower-cased switch over the platforms it
        /// knows, and 400 "Unsupported platform" for the rest.
        var isUpdatedForFCMv1: Bool { self == .fcmv1 }
    }

    /// Which of Microsoft's two backend samples this backend is. They share no route: a
    /// client of one dialect finds nothing but 404s at a backend of the other.
    public enum API: String, Codable, Sendable, CaseIterable {
        /// The tutorial's ASP.NET Web API AppBackend: Basic authentication, registration ids
        /// asked for first, `POST /api/notifications?pns=…&to_tag=…`.
        case registrations
        /// The newer "backend service" (sample `PushNotificationsAPI`, ASP.NET Core): an API
        /// key, installations under ids the client chooses, `POST /api/notifications/requests`.
        case installations
    }

    /// The name the installations dialect accepts for Android. The sample's current
    /// version says `fcmv1`; the version its docs showed before FCM v1 says `fcm`, and
    /// sends Android the legacy FCM payloads.
    public enum InstallationsAndroidName: String, Codable, Sendable, CaseIterable {
        case fcmv1
        case fcm
    }

    /// Configuration, built once (by `main` or a test) and never changed while running.
    public struct Options: Equatable, Sendable {
        /// IPv4 address to bind; loopback by default because the backend checks no
        /// real credentials.
        public var host: String
        /// 0 picks an ephemeral port; `DevBackendServer.start()` returns the real one.
        public var port: Int
        public var androidPlatformName: AndroidPlatformName
        /// What an upsert to an unknown or expired id answers. The tutorial tries to
        /// pass the hub's 410 on but throws instead, so ASP.NET answers 500.
        public var goneStatus: Int
        /// Model a fixed backend that escapes the message text before pasting it into
        /// the payload, instead of the tutorial's plain concatenation.
        public var escapesText: Bool
        /// Print nothing, not even the one line per push.
        public var quiet: Bool
        /// Print one line per request (method, path, status, user; never a secret).
        public var logRequests: Bool
        /// Users with a password of their own (user -> password), for tests that need a
        /// password the backend accepts which differs from the user name.
        public var accounts: [String: String]
        /// Which backend sample this is; its routes are the only ones served.
        public var api: API
        /// The key every installations request must carry (`apikey` header or query).
        /// Required for `.installations`; never printed or returned by any route.
        public var apiKey: String?
        /// The Android platform name of the installations dialect.
        public var installationsAndroidName: InstallationsAndroidName

        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            androidPlatformName: AndroidPlatformName = .fcm,
            goneStatus: Int = 500,
            escapesText: Bool = false,
            quiet: Bool = false,
            logRequests: Bool = false,
            accounts: [String: String] = [:],
            api: API = .registrations,
            apiKey: String? = nil,
            installationsAndroidName: InstallationsAndroidName = .fcmv1
        ) {
            self.host = host
            self.port = port
            self.androidPlatformName = androidPlatformName
            self.goneStatus = goneStatus
            self.escapesText = escapesText
            self.quiet = quiet
            self.logRequests = logRequests
            self.accounts = accounts
            self.api = api
            self.apiKey = apiKey
            self.installationsAndroidName = installationsAndroidName
        }

        /// Platform names the upsert route accepts.
        var acceptedPlatforms: Set<String> {
            let others: Set<String> = androidPlatformName.isUpdatedForFCMv1 ? ["wns", "apns"] : ["mpns", "wns", "apns"]
            return others.union(androidPlatformName.acceptedNames)
        }

        /// The `pns` values the send route knows; any other is a 500.
        var knownServices: [String: NotificationService] {
            androidPlatformName.isUpdatedForFCMv1
                ? ["apns": .apns, "fcmv1": .fcmV1, "wns": .wns]
                : ["apns": .apns, "gcm": .android, "fcm": .android, "wns": .wns]
        }
    }
}
