/// An in-memory, loopback stand-in for the ASP.NET "AppBackend" of the Notification
/// Hubs tutorial "send push notifications to specific users", reproducing its
/// behaviour (bugs included) so clients can be tested against it without Azure.
///
/// `DevBackend` is the namespace for the backend's value types; the server itself
/// is `DevBackendServer`.
public enum DevBackend {
    public static let version = "0.1.0"
}
