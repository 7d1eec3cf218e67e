import Foundation
import Testing
@testable import NotifyCore
import NotifyTestSupport

struct CredentialStoreTests {
    private let credentials = Credentials(
        user: "bob", password: "s3cr\"et:pw", backend: "https://b.example",
        revision: "rev-1", savedAt: Date(timeIntervalSince1970: 1_800_000_000))

    @Test func roundTrips() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        try store.save(credentials)
        let (loaded, warning) = store.load()
        #expect(loaded == credentials)
        #expect(loaded?.password == "s3cr\"et:pw")
        #expect(warning == nil)
    }

    /// Format 2: the password in the keyring, the file naming its item and holding none; a
    /// file without either is damaged, not a login with an empty password.
    @Test func aPasswordInTheKeyringLeavesNoneInTheFile() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        var inKeyring = credentials
        inKeyring.keyringItem = "rev-1"
        try store.save(inKeyring)
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(!text.contains("s3cr") && !text.contains("\"password\""), "\(text)")
        func version() throws -> Int? {
            (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: store.path))) as? [String: Any])?["version"] as? Int
        }
        let written = try version()
        #expect(text.contains("\"keyring_item\"") && written == 2, "\(text)")
        let loaded = store.load().0
        #expect(loaded?.keyringItem == "rev-1" && loaded?.password == "" && loaded?.user == "bob")
        // Without the keyring, format 1 as before: what an older notifyd reads.
        try store.save(credentials)
        let older = try version()
        #expect(older == 1)
        try Data(#"{"version":2,"user":"bob","revision":"r","saved_at":"2026-01-01T00:00:00Z"}"#.utf8).write(to: URL(fileURLWithPath: store.path))
        let (none, warning) = store.load()
        #expect(none == nil && warning?.contains("could not be read") == true, "\(String(describing: warning))")
    }

    @Test func fileIsCredentialsJSONWithMode0600() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        #expect(store.path == directory.file("credentials.json"))
        try store.save(credentials)
        #expect(permissionBits(store.path) == 0o600)
        #expect(try directory.entries() == ["credentials.json"])
    }

    @Test func missingFileIsNilWithoutWarning() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let (loaded, warning) = CredentialStore(directory: directory.path).load()
        #expect(loaded == nil)
        #expect(warning == nil)
    }

    @Test func removeIsIdempotent() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        try store.save(credentials)
        try store.remove()
        #expect(!FileManager.default.fileExists(atPath: store.path))
        try store.remove()
        #expect(store.load().0 == nil)
    }

    @Test func removeAlsoRemovesACopyAnInterruptedSaveLeft() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        try store.save(credentials)
        let leftover = store.path + ".tmp-4242-17"
        #expect(FileManager.default.createFile(atPath: leftover, contents: try Data(contentsOf: URL(fileURLWithPath: store.path))))
        #expect(FileManager.default.createFile(atPath: directory.file("state.json"), contents: Data("{}".utf8)))
        try store.remove()
        #expect(try directory.entries() == ["state.json"])
    }

    @Test func removeInAMissingDirectoryIsFine() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try CredentialStore(directory: directory.file("never-created")).remove()
        #expect(try directory.entries() == [])
    }

    @Test func garbledFileGivesAWarningAndNilAndStaysInPlace() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        let garbage = Data(#"{"user":"bob","password":"#.utf8)
        #expect(FileManager.default.createFile(atPath: store.path, contents: garbage))
        let (loaded, warning) = store.load()
        #expect(loaded == nil)
        let text = try #require(warning)
        #expect(text.contains(store.path))
        #expect(text.contains("notifyctl login"))
        // Not moved: it may hold a password a person wants to recover.
        #expect(FileManager.default.contents(atPath: store.path) == garbage)
    }

    @Test func fileWithMissingFieldsGivesAWarning() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        #expect(FileManager.default.createFile(atPath: store.path, contents: Data(#"{"user":"bob"}"#.utf8)))
        let (loaded, warning) = store.load()
        #expect(loaded == nil)
        #expect(warning != nil)
    }

    @Test func fileUsesSnakeCaseSavedAt() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        try store.save(credentials)
        let text = String(decoding: try #require(FileManager.default.contents(atPath: store.path)), as: UTF8.self)
        #expect(text.contains(#""saved_at" : "2027-01-15T08:00:00Z""#))
    }

    /// A credentials file that exists but cannot be read (here a directory in its place;
    /// in real life e.g. a root-owned file) is reported as "not logged in" without a
    /// warning, so nobody learns why the login was lost.
    @Test func existingButUnreadableFileGivesAWarning() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        let (loaded, warning) = store.load()
        #expect(loaded == nil)
        #expect(warning != nil)
    }

    /// A huge file (200 MB, sparse) is not read at all; like any unreadable credentials it
    /// stays where it is, since it may hold a password someone wants back.
    @Test func aHugeFileIsNotReadAndStaysInPlace() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        try store.save(Credentials(user: "alice", password: "pw", backend: nil))
        #expect(truncate(store.path, 200 << 20) == 0)
        let (loaded, warning) = store.load()
        #expect(loaded == nil)
        #expect(warning == "credentials file \(store.path) could not be read (it is larger than 1 MiB, more than notifyd reads); log in again with `notifyctl login USER`")
        #expect(try directory.entries() == ["credentials.json"])
    }

    @Test func aFileFromANewerNotifydStopsAStart() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = CredentialStore(directory: directory.path)
        try store.refuseNewerFormat()
        try store.save(Credentials(user: "alice", password: "pw", backend: nil))
        try store.refuseNewerFormat()
        #expect(FileManager.default.createFile(atPath: store.path, contents: Data(#"{"version": 99, "user": "alice"}"#.utf8)))
        let refusal = #expect(throws: CoreError.self) { try store.refuseNewerFormat() }
        #expect(refusal?.description.hasPrefix("\(store.path) was written by a newer notifyd (format 99; this one reads formats up to 2); refusing to overwrite it") == true)
    }
}
