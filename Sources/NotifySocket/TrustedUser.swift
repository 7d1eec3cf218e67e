/// Whom notifyd trusts on this machine: the user it runs as, and root, who can read that
/// user's files and memory anyway. notifyd answers only their connections, notifyctl
/// talks only to a notifyd of theirs (it would hand over a password), and the files and
/// directories notifyd reads its settings from must be theirs. One rule, kept here.
public enum TrustedUser {
    /// Whether `uid` is `own` or root.
    public static func includes(_ uid: UInt32, own: UInt32 = currentUID()) -> Bool {
        uid == own || uid == 0
    }
}
