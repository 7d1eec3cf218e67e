import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

struct StateStoreTests {
    private func sampleState() -> DeviceState {
        var state = DeviceState()
        state.token = "0A1B2C3D"
        state.platform = .fcm
        state.tags = ["news", "from:alice"]
        state.enabled = false
        state.registration.id = "8499338226434223-1"
        state.registration.idBackend = "https://b.example"
        state.registration.registered = RegisteredTarget(handle: "0A1B2C3D", platform: .fcm, tags: ["news"], user: "bob", backend: "https://b.example")
        state.registration.registeredAt = Date(timeIntervalSince1970: 1_800_000_000)
        state.registration.refusedRevision = "rev-1"
        state.registration.rejectedReason = "HTTP 400"
        state.registration.refusedPlatforms = [RefusedPlatform(backend: "https://b.example", platform: .fcmv1, detail: "Unsupported platform")]
        return state
    }

    @Test func roundTrips() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        let state = sampleState()
        try store.save(state)
        let (loaded, warning) = store.load()
        #expect(loaded == state)
        #expect(warning == nil)
    }

    @Test func fileIsNamedStateJSONAndIsMode0600() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        #expect(store.path == directory.file("state.json"))
        try store.save(sampleState())
        #expect(permissionBits(store.path) == 0o600)
    }

    @Test func fileUsesSnakeCaseKeysAndISODates() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        try store.save(sampleState())
        let text = String(decoding: try #require(FileManager.default.contents(atPath: store.path)), as: UTF8.self)
        #expect(text.contains(#""id_backend""#))
        #expect(text.contains(#""registered_at" : "2027-01-15T08:00:00Z""#))
        #expect(text.contains(#""refused_revision""#))
        #expect(text.contains(#""refused_platforms""#))
    }

    /// A file written before the refused platform names were kept has no such key, and
    /// neither has one written with none: both read as none.
    @Test func noRefusedPlatformsIsNoKey() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        var state = sampleState()
        state.registration.refusedPlatforms = []
        try store.save(state)
        let text = String(decoding: try #require(FileManager.default.contents(atPath: store.path)), as: UTF8.self)
        #expect(!text.contains("refused_platforms"))
        #expect(store.load().0 == state)
    }

    @Test func missingFileGivesTheDefaultStateAndNoWarning() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let (state, warning) = StateStore(directory: directory.path).load()
        #expect(state == DeviceState())
        #expect(state.token == nil)
        #expect(state.platform == .apns)
        #expect(state.enabled)
        #expect(warning == nil)
        #expect(try directory.entries() == [])
    }

    @Test func corruptFileIsMovedAsideWithAWarning() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        let garbage = Data("{\"token\": \"AB".utf8)
        #expect(FileManager.default.createFile(atPath: store.path, contents: garbage))

        let (state, warning) = store.load(now: Date(timeIntervalSince1970: 1_700_000_000))

        #expect(state == DeviceState())
        let text = try #require(warning)
        let aside = store.path + ".corrupt-1700000000"
        #expect(text.contains(aside))
        #expect(text.contains("not valid JSON"))
        #expect(try directory.entries() == ["state.json.corrupt-1700000000"])
        #expect(FileManager.default.contents(atPath: aside) == garbage)
    }

    @Test func wellFormedJSONOfTheWrongShapeIsMovedAsideToo() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        #expect(FileManager.default.createFile(atPath: store.path, contents: Data(#"{"version":"one"}"#.utf8)))

        let (state, warning) = store.load(now: Date(timeIntervalSince1970: 42))

        #expect(state == DeviceState())
        #expect(warning?.contains("unexpected content") == true)
        #expect(try directory.entries() == ["state.json.corrupt-42"])
    }

    @Test func aFreshStateCanBeSavedAfterACorruptOne() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        #expect(FileManager.default.createFile(atPath: store.path, contents: Data("nonsense".utf8)))
        var (state, _) = store.load(now: Date(timeIntervalSince1970: 7))
        state.token = "ABCD"
        try store.save(state)
        #expect(store.load().0.token == "ABCD")
        #expect(store.load().warning == nil)
        #expect(try directory.entries() == ["state.json", "state.json.corrupt-7"])
    }

    @Test func savingLeavesNoTemporaryFiles() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        var state = sampleState()
        try store.save(state)
        state.tags = ["changed"]
        try store.save(state)
        #expect(try directory.entries() == ["state.json"])
        #expect(store.load().0.tags == ["changed"])
    }

    @Test func savingIntoAMissingDirectoryIsAStorageError() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.file("gone"))
        let error = #expect(throws: CoreError.self) { try store.save(DeviceState()) }
        guard case .storage? = error else {
            Issue.record("expected a storage error, got \(String(describing: error))")
            return
        }
    }

    /// The design: "A state file that cannot be read is moved aside with a warning, never
    /// silently dropped." A `state.json` that exists but cannot be read (here: a directory;
    /// in real life e.g. a root-owned file left by `sudo notifyd`) loads as if there were no
    /// file at all: a fresh state and no warning, and the next save replaces it silently.
    @Test func existingButUnreadableFileIsReported() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        let (state, warning) = store.load(now: Date(timeIntervalSince1970: 5))
        #expect(state == DeviceState())
        #expect(warning?.contains("cannot be read") == true)
        #expect(!FileManager.default.fileExists(atPath: store.path), "moved aside, so the next save does not replace it silently")
    }

    @Test func aFileFromTheFirstFormatStillLoads() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        let first = #"{"enabled": true, "platform": "wns", "registration": {"id": "r-1", "id_backend": "https://b.example", "registered": {"backend": "https://b.example", "handle": "h", "platform": "wns", "tags": [], "user": "bob"}, "registered_at": "2027-01-15T08:00:00Z"}, "tags": ["news"], "token": "h", "version": 1}"#
        #expect(FileManager.default.createFile(atPath: store.path, contents: Data(first.utf8)))
        let (state, warning) = store.load()
        #expect(warning == nil)
        #expect(state.platform == .wns)
        #expect(state.registration.registered?.user == "bob")
        #expect(state.registration.registeredAt == Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// Never misread, never moved or replaced: the notifyd that wrote it may run again, and
    /// a daemon refuses to start over it (`refuseNewerFormat`).
    @Test func aFileFromANewerNotifydIsRefusedWithAMessageAndLeftAlone() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        let newer = Data(#"{"version": 99, "token": "AB"}"#.utf8)
        #expect(FileManager.default.createFile(atPath: store.path, contents: newer))
        let (state, warning) = store.load(now: Date(timeIntervalSince1970: 7))
        #expect(state == DeviceState())
        #expect(warning?.contains("written by a newer notifyd (format 99; this one reads formats up to 1)") == true)
        #expect(try directory.entries() == ["state.json"])
        #expect(FileManager.default.contents(atPath: store.path) == newer)
        let refusal = #expect(throws: CoreError.self) { try store.refuseNewerFormat() }
        #expect(refusal?.description == "\(store.path) was written by a newer notifyd (format 99; this one reads formats up to 1); refusing to overwrite it. Run that newer notifyd, or move the file away to start without it")
    }

    /// Only a newer format stops a start: a missing, damaged or current file is for `load`.
    @Test func onlyANewerFormatIsRefused() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        try store.refuseNewerFormat()
        for text in [#"{"version": 1}"#, "{\"token", #"{"version": "two"}"#, ""] {
            #expect(FileManager.default.createFile(atPath: store.path, contents: Data(text.utf8)))
            try store.refuseNewerFormat()
        }
    }

    /// A state file is small; a huge one (here 200 MB, sparse) is not notifyd's: it is moved
    /// aside from its size alone, unread, like any file that cannot be read.
    @Test func aHugeFileIsMovedAsideUnread() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = StateStore(directory: directory.path)
        try store.save(sampleState())
        #expect(truncate(store.path, 200 << 20) == 0)
        let (state, warning) = store.load(now: Date(timeIntervalSince1970: 9))
        #expect(state == DeviceState())
        #expect(warning == "state file \(store.path) could not be read (it is larger than 1 MiB, more than notifyd reads); moved it to \(store.path).corrupt-9 and starting with a fresh state")
        #expect(try directory.entries() == ["state.json.corrupt-9"])
        try store.refuseNewerFormat()
    }
}
