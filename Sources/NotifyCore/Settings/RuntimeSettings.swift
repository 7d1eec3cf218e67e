import NotifyProtocol

/// The settings a running notifyd works from: every setting but the socket and the state
/// directory, which it cannot leave while it runs. One value, held by `SettingsStore` and
/// read where each setting is used, so that a reload changes it everywhere at once.
public struct RuntimeSettings: Sendable, Equatable {
    /// `backend`: the backend of a login that names none.
    public var backend: String?
    /// `backend_api`: which of the two backends `backend` is (a login's own backend too).
    public var backendAPI: BackendDialect
    /// `allow_insecure_http`: plain http to a backend on another machine is accepted.
    public var allowInsecureHTTP: Bool
    /// `platform`: the platform of a first token set without `--platform`.
    public var platform: Platform
    /// `send_platforms`: where `send` goes when the request names no platform.
    public var sendPlatforms: [Platform]
    /// `android_name`: the name the backend knows Android by (`fcmv1`, or `fcm` or `gcm` for a
    /// backend that predates FCM v1), whichever of them was given.
    public var androidName: Platform
    /// `escape`: whether notifyd escapes message text for the tutorial backend.
    public var escaping: NotificationText.Escaping
    /// `refresh_interval`, and `retry_min`/`retry_max` as `policy.backoff` (see `retry`).
    public var policy: RegistrationPolicy
    /// `request_timeout`: seconds one backend request may take.
    public var requestTimeout: Double
    /// `outbox_expiry`: seconds a message accepted now is retried before it expires.
    public var outboxExpiry: Double
    /// `outbox_max`: the queued messages (each platform's copy counts) past which `send` is
    /// refused, so that a backend away for days, or a script sending in a loop, cannot
    /// grow the outbox without end.
    public var outboxMax: Int
    public static let defaultOutboxMax = 10_000
    public static let largestOutboxMax = 1_000_000
    /// `outbox_max_bytes`: the bytes of message text queued (each platform's copy counts)
    /// past which `send` is refused, as at `outbox_max`: what the outbox may take of the disk.
    public var outboxMaxBytes: Int
    public static let defaultOutboxMaxBytes = 256 << 20
    public static let largestOutboxMaxBytes = 1 << 40
    /// `max_connections`: backend requests under way at once, each on a connection of its own.
    public var maxConnections: Int
    /// `keep_alive`: seconds an unused connection to the backend is kept for the next
    /// request. Once none is left and no request runs, notifyd also unloads libcurl.
    public var keepAlive: Double
    /// `password_command`, or the systemd credential that wins over it.
    public var passwordSource: PasswordSource
    /// `password_timeout`: seconds the password command may take before it is stopped.
    public var passwordTimeout: Double
    /// `password_store`: where a login's password is kept.
    public var passwordStore: PasswordStore
    /// The Secret Service client `password_store` runs. Empty, the default here, reaches no
    /// keyring: only the daemon's own settings name `secret-tool` (`ResolvedSettings`), so
    /// that settings made in code, as tests make them, never touch the user's keyring.
    public var keyringTool: String
    /// `log_level`
    public var logLevel: LogLevel
    /// `log_file`: where the log goes instead of standard error.
    public var logFile: String?

    /// Enough that the backend answers while notifyd prepares the next requests; each
    /// recipient's messages still go in order (contrib/benchmarks/RESULTS.md has the figures).
    public static let defaultConnections = 16
    public static let mostConnections = 64
    /// Longer than libcurl's own 118 s, and shorter than the 130 s after which ASP.NET's
    /// Kestrel closes a connection it has not heard on.
    public static let defaultKeepAlive: Double = 120

    public init(backend: String? = nil, backendAPI: BackendDialect = .registrations, allowInsecureHTTP: Bool = false, platform: Platform = .apns, sendPlatforms: [Platform] = [.apns],
                androidName: Platform = .fcmv1, escaping: NotificationText.Escaping = .tutorial, policy: RegistrationPolicy = RegistrationPolicy(),
                requestTimeout: Double = 30, outboxExpiry: Double = 7 * 86400, outboxMax: Int = RuntimeSettings.defaultOutboxMax,
                outboxMaxBytes: Int = RuntimeSettings.defaultOutboxMaxBytes,
                maxConnections: Int = RuntimeSettings.defaultConnections,
                keepAlive: Double = RuntimeSettings.defaultKeepAlive, passwordSource: PasswordSource = .stored, passwordTimeout: Double = 60,
                passwordStore: PasswordStore = .auto, keyringTool: String = "", logLevel: LogLevel = .notice, logFile: String? = nil) {
        self.backend = backend
        self.backendAPI = backendAPI
        self.allowInsecureHTTP = allowInsecureHTTP
        self.platform = platform
        self.sendPlatforms = sendPlatforms
        self.androidName = androidName
        self.escaping = escaping
        self.policy = policy
        self.requestTimeout = requestTimeout
        self.outboxExpiry = outboxExpiry
        self.outboxMax = outboxMax
        self.outboxMaxBytes = outboxMaxBytes
        self.maxConnections = maxConnections
        self.keepAlive = keepAlive
        self.passwordSource = passwordSource
        self.passwordTimeout = passwordTimeout
        self.passwordStore = passwordStore
        self.keyringTool = keyringTool
        self.logLevel = logLevel
        self.logFile = logFile
    }

    /// `retry_min` and `retry_max`: the waits after failed registrations and sends alike.
    public var retry: Backoff {
        get { policy.backoff }
        set { policy.backoff = newValue }
    }
}
