import CBuildInfo

/// The protocol's version. Raised when a change would break an existing client;
/// adding commands, fields or error codes does not raise it.
public enum ProtocolVersion {
    public static let current = 1
}

/// The version of notifyd and notifyctl, printed by `--version` and `ping`.
public enum NotifydVersion {
    public static let current = "0.1.0"
    /// Which build of it: "git 1a2b3c4d5e6f", "0.1.0+b1, git 1a2b3c4d5e6f"; nil when the
    /// build was not told.
    public static let build: String? = {
        let text = String(cString: notifyd_build())
        return text.isEmpty ? nil : text
    }()

    /// "0.1.0 (protocol 1; build git 1a2b3c4d5e6f)": the version first, as scripts read it
    /// (build-deb.sh takes the second word), then the protocol and the build where known.
    public static func described(version: String = current, protocol: Int = ProtocolVersion.current, build: String? = build) -> String {
        "\(version) (protocol \(`protocol`)" + (build.map { "; build \($0)" } ?? "") + ")"
    }
}
