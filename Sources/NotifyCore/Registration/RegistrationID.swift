/// What notifyd takes as a registration id from the backend. The id is stored in
/// state.json, logged, shown by `status` and `set-token`, and put into the path of later
/// requests, so the backend must not be able to put just anything there: a newline that
/// forges a log line, an escape sequence for the terminal, 60 KB, the password. The
/// tutorial's ids are digits and dashes ("8499338226434223-7171823285547413-2"); letters,
/// '_' and '.' are allowed too, for backends of other making.
enum RegistrationID {
    static let maximumLength = 128
    /// A shorter password could turn up in an honest id by chance (a four-digit one in the
    /// tutorial's digits, say), and is not looked for.
    static let shortestSecretLookedFor = 6

    /// Why `id` is not a registration id notifyd takes, in words that finish "the backend
    /// answered the registration request with …", or nil when it is one.
    static func problem(_ id: String, account: BackendAccount) -> String? {
        let secrets = BackendText.secrets(of: account).filter { $0.count >= shortestSecretLookedFor }
        if secrets.contains(where: { id.contains($0) }) {
            // Said without the id, which would only be shown with the password redacted.
            return "an id that contains the password; it was neither used nor kept (is the backend URL right?)"
        }
        guard id.isEmpty || id.utf8.count > maximumLength || !id.utf8.allSatisfy(isAllowed) else { return nil }
        let shown = id.isEmpty ? "an empty id" : "the id '\(BackendText.excerpt(id, account: account, maximumLength: 40))' (\(id.utf8.count) bytes)"
        return "\(shown), which is not one: a registration id is 1 to \(maximumLength) ASCII letters, digits, '-', '_' or '.'; "
            + "it was neither used nor kept (is the backend URL right?)"
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }
}
