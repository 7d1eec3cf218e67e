import Foundation
import NotifyCore
@testable import NotifyDaemon
import Testing

/// Path settings as people write them: `~`, `$HOME` and `${XDG_STATE_HOME}` expanded, the
/// XDG directories defaulted when unset, and an unset variable a problem.
@Suite struct PathExpansionTests {
    static let environment = ["HOME": "/home/alice", "LOGS": "/var/log/alice"]

    @Test(arguments: [
        ("~/.local/state/notifyd/notifyd.log", "/home/alice/.local/state/notifyd/notifyd.log"),
        ("~", "/home/alice"),
        ("$HOME/notifyd.log", "/home/alice/notifyd.log"),
        ("${HOME}/x", "/home/alice/x"),
        ("$XDG_STATE_HOME/notifyd/notifyd.log", "/home/alice/.local/state/notifyd/notifyd.log"),
        ("${LOGS}/notifyd.log", "/var/log/alice/notifyd.log"),
        ("/srv/plain", "/srv/plain"),
        ("/a/~b", "/a/~b"),
    ])
    func expandsAsAShellWould(path: String, expanded: String) throws {
        #expect(try PathExpansion.expand(path, environment: Self.environment) == expanded)
    }

    @Test(arguments: ["$UNSET/x", "~bob/x", "${HOME/x", "$/x", "$1/x"])
    func refusesWhatItCannotExpand(path: String) {
        #expect(throws: PathExpansion.Problem.self) { try PathExpansion.expand(path, environment: Self.environment) }
    }

    /// Through the settings: the expanded path in effect, and where it came from saying
    /// what was written.
    @Test func aConfigFileWithATildeLogFileIsTakenAndSaysWhatItExpandedTo() {
        let (settings, problems) = ResolvedSettings.resolve(flags: [], configFlag: nil, environment: Self.environment) { _ throws(FileContents.Problem) in
            Data("log_file = ~/.local/state/notifyd/notifyd.log\nstate_dir = $UNSET/state\n".utf8)
        }
        #expect(settings.runtime.logFile == "/home/alice/.local/state/notifyd/notifyd.log")
        #expect(settings.origins["log_file"]?.hasSuffix("expanded from ~/.local/state/notifyd/notifyd.log") == true, "\(settings.origins)")
        #expect(problems.map(\.description).contains { $0.contains("state_dir") && $0.contains("$UNSET is not set") }, "\(problems)")
        #expect(settings.stateDirectory == nil)
    }
}
