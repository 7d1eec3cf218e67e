/// `password_store`: where `login` keeps the password it is given. `auto` uses the
/// session's Secret Service where one answers, else the 0600 credentials file; `keyring`
/// insists on the Secret Service (a login fails without one); `file` never asks it.
/// A password notifyd gets itself (`password_command`, a systemd credential) is kept
/// nowhere.
public enum PasswordStore: String, Sendable, CaseIterable {
    case auto
    case keyring
    case file
}

