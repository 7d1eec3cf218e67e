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

/// A registration left at a backend this device no longer uses, with the login that made
/// it: what its deletion there needs, kept across restarts.
struct RetiredEntry: Codable, Equatable, Sendable {
    var id: String
    var backend: String
    /// Absent for `registrations`, the only API of files written before it.
    var api: BackendDialect?
    var user: String
    /// As `credentials.json` keeps it: the password, or nothing when a password command or
    /// systemd credential gives it, or when it is in the keyring (`keyringItem`).
    var password: String
    var keyringItem: String?
    var retiredAt: Date
    var failures = 0
    var nextAttemptAt: Date?
    var lastError: String?

    struct Key: Hashable {
        var id: String
        var backend: String
        var api: BackendDialect
    }

    var key: Key { Key(id: id, backend: backend, api: dialect) }

    var dialect: BackendDialect { api ?? .registrations }

    /// "registration 42 at https://…", or "installation … at …".
    var described: String { (dialect == .installations ? "installation " : "registration ") + id + " at " + backend }

    /// Kept with the entry, in this file or the keyring: not one a password source gave.
    var hasPasswordOfItsOwn: Bool { !password.isEmpty || keyringItem != nil }

    /// The login the deletion is made with: that user, at that backend.
    var credentials: Credentials {
        Credentials(user: user, password: password, backend: backend, api: dialect, revision: "retired-" + id, savedAt: retiredAt, keyringItem: keyringItem)
    }

    enum CodingKeys: String, CodingKey {
        case id, backend, api, user, password
        case keyringItem = "keyring_item"
        case retiredAt = "retired_at"
        case failures
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
    }
}

/// `retired-registrations.json` in the state directory, mode 0600 like `credentials.json`,
/// since it holds the password of the login each registration was made with. Absent when
/// nothing is left to delete.
public struct RetiredRegistrationStore: Sendable {
    public let path: String
    private let calls: FileSystemCalls

    static let currentVersion = 1
    /// A few entries of a few hundred bytes: a larger file is not one notifyd wrote.
    static let largestFile = FileContents.mebibyte

    private struct Record: Codable {
        var version: Int?
        var registrations: [RetiredEntry]
    }

    public init(directory: String, calls: FileSystemCalls = .system) {
        path = FilePath.join(directory, "retired-registrations.json")
        self.calls = calls
    }

    /// Throws when the file was written by a newer notifyd, which a start must not overwrite.
    public func refuseNewerFormat() throws(CoreError) {
        try DiskFormat.refuseNewer(path, supported: Self.currentVersion, limit: Self.largestFile)
    }

    /// The entries, and a warning when the file could not be used (then there are none:
    /// the registrations it named stay at their backends, as they did before notifyd
    /// deleted them).
    func load() -> ([RetiredEntry], warning: String?) {
        let (reading, exposedMode) = StateFile.readPrivate(path, limit: Self.largestFile, supported: Self.currentVersion,
                                                           as: Record.self, \.registrations)
        switch reading {
        case .value(let entries):
            return (entries, exposedMode.map(exposedWarning))
        case .missing:
            return ([], nil)
        case .newer(let newer):
            return ([], "\(path) was not read: \(newer); the registrations it names are not deleted at their old backends")
        case .damaged(let reason):
            // Kept: it holds the passwords those deletions need, for a person to recover.
            return ([], "\(path) could not be read (\(reason)); the registrations it names are not deleted at their old backends")
        }
    }

    /// Said once a file others could read (mode 0`mode`) was made 0600 again, as for
    /// `credentials.json`: it holds the passwords the deletions need.
    private func exposedWarning(mode: String) -> String {
        "\(path) could be read by others (mode 0\(mode)); it is 0600 now, but the passwords in it may have been read: change them"
    }

    func save(_ entries: [RetiredEntry]) throws(CoreError) {
        guard !entries.isEmpty else {
            if calls.unlink(path) != 0 && errno != ENOENT {
                throw .storage("cannot remove \(path): \(String(cString: strerror(errno)))")
            }
            AtomicFile.syncDirectory(FilePath.directory(of: path), using: calls)
            return
        }
        try StateFile.write(Record(version: Self.currentVersion, registrations: entries), to: path, using: calls, naming: "the retired registrations")
    }
}
