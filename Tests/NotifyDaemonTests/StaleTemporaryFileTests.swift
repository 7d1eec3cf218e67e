import Foundation
import NotifyProtocol
import Testing
import NotifyTestSupport

/// A write killed between creating its temporary file and renaming it leaves a copy of
/// the file behind, possibly holding the password: nothing of it survives a restart.
@Suite(.stopsFixtures) struct StaleTemporaryFileTests {
    @Test func aStartRemovesWhatAKilledWriteLeft() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state + "/outbox", withIntermediateDirectories: true)
        let leftovers = ["credentials.json.tmp-4242-17", "state.json.tmp-4242-18", "outbox/0001.json.tmp-4242-19"]
        for name in leftovers {
            #expect(FileManager.default.createFile(atPath: state + "/" + name, contents: Data(#"{"password":"alice"}"#.utf8)))
        }
        let fixture = try await DaemonFixture(stateDirectory: state)
        for name in leftovers {
            #expect(!FileManager.default.fileExists(atPath: state + "/" + name), "\(name) survived the start")
        }
        #expect(fixture.log.contains("removed 2 temporary file(s) an interrupted write left in \(state)"))
        #expect(fixture.log.contains("removed 1 temporary file(s) an interrupted write left in \(state)/outbox"))
        #expect(try await fixture.status().registration.state == .notLoggedIn)
    }

    @Test func logoutRemovesACopyOfTheCredentials() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        let leftover = fixture.stateDirectory + "/credentials.json.tmp-4242-17"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data(#"{"password":"alice"}"#.utf8)))
        _ = try await fixture.call(LogoutCommand())
        let files = try FileManager.default.contentsOfDirectory(atPath: fixture.stateDirectory)
        #expect(!files.contains { $0.hasPrefix("credentials.json") }, "\(files)")
    }
}
