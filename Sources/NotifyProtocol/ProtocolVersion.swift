/// The protocol's version. Raised when a change would break an existing client;
/// adding commands, fields or error codes does not raise it.
public enum ProtocolVersion {
    public static let current = 1
}

/// The version of notifyd and notifyctl, printed by `--version` and `ping`.
public enum NotifydVersion {
    public static let current = "0.1.0"
}
