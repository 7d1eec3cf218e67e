#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyProtocol

/// The login notifyd acts as. The password stays out of every description.
public struct Credentials: Codable, Equatable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var user: String
    public var password: String
    /// The backend chosen at login; the daemon's configured one when nil.
    public var backend: String?
    /// The backend origin (`BackendURL.origin`) this login was made for, and the only one
    /// its password goes to: a configured `backend` moved to another origin needs a login
    /// there. Nil only for a login saved before origins were kept, which `AccountKeeper`
    /// binds to the backend in force when it is loaded.
    public var origin: String?
    /// The API of the backend the login was made for (`backend_api` then): a password and
    /// an API key are not interchangeable, so a login applies only where the API is its own.
    public var api: BackendDialect
    /// New at every login, so "the credentials changed" is a simple comparison that needs
    /// no password (and no hash of it) anywhere else.
    public var revision: String
    public var savedAt: Date
    /// Set when the password is kept in the Secret Service, not in `credentials.json`: the
    /// id of its item there (the revision of the login that stored it). `password` is empty
    /// until it was looked up.
    public var keyringItem: String?

    public init(user: String, password: String, backend: String?, origin: String? = nil, api: BackendDialect = .registrations,
                revision: String = UUID().uuidString, savedAt: Date = Date(), keyringItem: String? = nil) {
        self.user = user
        self.api = api
        self.password = password
        self.backend = backend
        self.origin = origin ?? BackendURL.origin(backend)
        self.revision = revision
        self.savedAt = savedAt
        self.keyringItem = keyringItem
    }

    public var reference: AccountReference { AccountReference(user: user, revision: revision) }

    public var description: String { "credentials of \(user)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "backend": backend as Any, "origin": origin as Any, "api": api, "revision": revision]) }

    enum CodingKeys: String, CodingKey {
        case user, password, backend, origin, api, revision
        case savedAt = "saved_at"
        case keyringItem = "keyring_item"
    }

    /// Basic auth cannot carry a ':' in the user name, and the tutorial backend splits on it.
    /// `role` names the user in messages: "user name", or "recipient" for `send --to`.
    public static func validateUser(_ user: String, role: String = "user name") throws(CoreError) {
        // Every byte one of those allowed: checked once per send, character by character
        // only to name a bad one.
        if !user.isEmpty && user.utf8.count <= longestUser && user.utf8.allSatisfy(isAllowedInUserName) { return }
        guard !user.isEmpty else { throw .invalidArgument("the \(role) is empty") }
        // The tag username:<name> holds at most as many characters as any tag: a longer
        // name was refused by the backend with a 400 that read like a platform it did not know.
        if user.count > longestUser {
            throw .invalidArgument("the \(role) is \(user.count) characters; at most \(longestUser) fit the tag username:<name> "
                                   + "by which the backend finds a user's devices (a tag holds up to \(RegistrationTags.maximumLength))")
        }
        guard !user.contains(":") else { throw .invalidArgument("a \(role) may not contain ':' (HTTP Basic authentication cannot carry it)") }
        // The backend tags registrations `username:<user>`, and tags hold only these. The
        // message names the rule's owner and the character in words: "''' is not allowed"
        // told a user with an apostrophe in their name neither why nor what.
        if let bad = user.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber)) && !"_@#.-".contains($0) }) {
            throw .invalidArgument("\"\(PrintableText.line(user))\" cannot be a \(role): the backend finds a user's devices by the tag username:<name>, "
                                   + "and its tags allow only ASCII letters, digits and _ @ # . - in a name, not \(characterName(bad))")
        }
    }
}

/// The longest user name: `username:` and it make one tag.
let longestUser = RegistrationTags.maximumLength - "username:".count

/// A character said in words where a quoted one would confuse: `'''`, `' '`.
private func characterName(_ character: Character) -> String {
    switch character {
    case "'": return "an apostrophe (')"
    case "\"": return "a double quote (\")"
    case " ": return "a space"
    default:
        guard let scalar = character.unicodeScalars.first else { return "it" }
        let code = "U+" + String(scalar.value, radix: 16, uppercase: true)
        if scalar.properties.generalCategory == .control || scalar.properties.isWhitespace { return code }
        return character.isASCII ? "\(character)" : "\(character) (\(code))"
    }
}

/// An ASCII letter or digit, or one of `_@#.-`.
private func isAllowedInUserName(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
         UInt8(ascii: "_"), UInt8(ascii: "@"), UInt8(ascii: "#"), UInt8(ascii: "."), UInt8(ascii: "-"):
        true
    default:
        false
    }
}

/// `credentials.json` in the state directory, mode 0600, apart from the state so that
/// the state can be shown, copied or moved aside without the password.
public struct CredentialStore: Sendable {
    public let path: String
    private let calls: FileSystemCalls

    public init(directory: String, calls: FileSystemCalls = .system) {
        path = FilePath.join(directory, "credentials.json")
        self.calls = calls
    }

    /// A user, a password and a URL: a larger file is not one notifyd wrote, and is not read.
    public static let largestFile = FileContents.mebibyte

    public func load() -> (Credentials?, warning: String?) {
        let (reading, exposedMode) = StateFile.readPrivate(path, limit: Self.largestFile, supported: CredentialsRecord.currentVersion,
                                                           as: CredentialsRecord.self, { try $0.credentials })
        switch reading {
        case .value(let credentials):
            return (credentials, exposedMode.map(exposedWarning))
        case .missing:
            return (nil, nil)
        case .newer(let newer):
            return (nil, "credentials file \(path) was not read: \(newer); log in again with `notifyctl login USER`, or run the newer notifyd")
        case .damaged(let reason):
            // Not moved aside: it may hold a password a person wants to recover.
            return (nil, "credentials file \(path) could not be read (\(reason)); log in again with `notifyctl login USER`")
        }
    }

    /// What to do once a file others could read (mode 0`mode`) was made 0600 again: the
    /// password may have been read meanwhile.
    private func exposedWarning(mode: String) -> String {
        "credentials file \(path) could be read by others (mode 0\(mode)); it is 0600 now, but the password in it may have been read: change it and log in again"
    }

    /// Throws when the file was written by a newer notifyd, which a start must not overwrite.
    public func refuseNewerFormat() throws(CoreError) {
        try DiskFormat.refuseNewer(path, supported: CredentialsRecord.currentVersion, limit: Self.largestFile)
    }

    public func save(_ credentials: Credentials) throws(CoreError) {
        try StateFile.write(CredentialsRecord(credentials), to: path, using: calls, naming: "the credentials")
    }

    /// Forgets the credentials, with any copy an interrupted save left behind.
    public func remove() throws(CoreError) {
        if calls.unlink(path) != 0 && errno != ENOENT {
            throw .storage("cannot remove \(path): \(String(cString: strerror(errno)))")
        }
        let directory = FilePath.directory(of: path)
        AtomicFile.removeStaleTemporaries(in: directory, of: FilePath.name(of: path))
        AtomicFile.syncDirectory(directory, using: calls)
    }
}

/// `credentials.json` as written on disk; its own type so that the file's format changes
/// only on purpose. Version 2 keeps the password in the keyring (`keyring_item`, no
/// `password`): a notifyd that knows only version 1 says the file is newer instead of
/// taking an empty password.
struct CredentialsRecord: Codable {
    static let currentVersion = 2

    var version: Int?
    var user: String
    var password: String?
    var keyringItem: String?
    var backend: String?
    var origin: String?
    /// Absent for `registrations`, the only API of the files written before it.
    var api: BackendDialect?
    var revision: String
    var savedAt: Date

    init(_ credentials: Credentials) {
        version = credentials.keyringItem == nil ? 1 : 2
        user = credentials.user
        password = credentials.keyringItem == nil ? credentials.password : nil
        keyringItem = credentials.keyringItem
        backend = credentials.backend
        origin = credentials.origin
        api = credentials.api == .registrations ? nil : credentials.api
        revision = credentials.revision
        savedAt = credentials.savedAt
    }

    var credentials: Credentials {
        get throws {
            guard keyringItem != nil || password != nil else {
                throw DecodingError.valueNotFound(String.self, .init(codingPath: [CodingKeys.password], debugDescription: "no password, and no keyring item"))
            }
            return Credentials(user: user, password: keyringItem == nil ? password ?? "" : "", backend: backend, origin: origin,
                               api: api ?? .registrations, revision: revision, savedAt: savedAt, keyringItem: keyringItem)
        }
    }

    enum CodingKeys: String, CodingKey {
        case version, user, password, backend, origin, api, revision
        case keyringItem = "keyring_item"
        case savedAt = "saved_at"
    }
}
