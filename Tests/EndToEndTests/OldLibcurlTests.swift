#if os(Linux)
import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// A libcurl too old for notifyd (before 7.68), found first by the loader: every request
/// fails with the version and what to do, in the login's reply too, and the daemon goes on.
/// The stand-in is built here from a few lines of C: the suite has only the system's libcurl.
@Suite struct OldLibcurlTests {
    /// What notifyd resolves; each a stub that is never called, as the version is read first.
    static let functions = [
        "curl_global_init", "curl_global_cleanup", "curl_easy_init", "curl_easy_setopt", "curl_easy_getinfo",
        "curl_easy_cleanup", "curl_easy_reset", "curl_slist_append", "curl_slist_free_all", "curl_multi_init",
        "curl_multi_setopt", "curl_multi_add_handle", "curl_multi_remove_handle", "curl_multi_socket_action",
        "curl_multi_info_read", "curl_multi_cleanup",
    ]

    @Test func aLibcurlOlderThanItNeedsIsNamedWithWhatToDo() async throws {
        let library = try await Self.standIn(version: "7.67.0", number: 0x074300, functions: Self.functions)
        defer { library.remove() }
        let said = try await Self.loginAndSetToken(libraryPath: library.path)
        let advice = "libcurl 7.67.0 is older than 7.68; install a newer one"
        #expect(said.login.contains("the credentials could not be checked (") && said.login.contains(advice), "\(said.login)")
        #expect(said.login.contains("checked at the first request"), "\(said.login)")
        #expect(said.setToken.contains(advice), "\(said.setToken)")
    }

    /// Older still, it lacks a function notifyd calls: the first one missing is named.
    @Test func aLibcurlWithoutTheSocketInterfaceIsNamedWithWhatToDo() async throws {
        let library = try await Self.standIn(version: "7.15.0", number: 0x070F00,
                                       functions: Self.functions.filter { $0 != "curl_multi_socket_action" })
        defer { library.remove() }
        let said = try await Self.loginAndSetToken(libraryPath: library.path)
        let advice = "libcurl has no curl_multi_socket_action: it is older than 7.68; install a newer one"
        #expect(said.login.contains(advice), "\(said.login)")
        #expect(said.setToken.contains(advice), "\(said.setToken)")
    }

    /// notifyd with the stand-in first in `LD_LIBRARY_PATH`, a dev backend, a login and a token.
    static func loginAndSetToken(libraryPath: String) async throws -> (login: String, setToken: String) {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: ["LD_LIBRARY_PATH": libraryPath])
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        // Saved unchecked, as when the backend is down: nobody else was logged in.
        #expect(login.status == 0, "\(login.output)\(login.error)")
        let token = try await daemon.notifyctl(["set-token", "3f2a1b"])
        #expect(token.status == 4, "not registered: \(token.output)\(token.error)")
        #expect(try await daemon.notifyctl(["ping"]).status == 0, "notifyd went on")
        await daemon.cleanUp()
        return (login.output + login.error, token.output + token.error)
    }

    /// A directory holding `libcurl.so.4` that reports `version` (`number` as libcurl encodes
    /// it) and exports `functions`, built with the C compiler that comes with Swift.
    static func standIn(version: String, number: Int, functions: [String]) async throws -> ScratchDirectory {
        let directory = try ScratchDirectory()
        let source = """
            struct version_info { int age; const char *text; unsigned int number; };
            static const struct version_info info = {0, "\(version)", \(number)};
            const struct version_info *curl_version_info(int age) { (void)age; return &info; }
            \(functions.map { "int \($0)(void) { return 0; }" }.joined(separator: "\n"))

            """
        try Data(source.utf8).write(to: URL(fileURLWithPath: directory.file("curl.c")))
        guard let compiler = ["clang", "cc"].lazy.compactMap(Self.onPath).first else {
            directory.remove()
            throw StandInFailure(message: "no C compiler (clang or cc) on PATH to build the stand-in libcurl")
        }
        let build = try await SpawnedProcess.start(compiler, ["-shared", "-fPIC", "-o", directory.file("libcurl.so.4"), directory.file("curl.c")])
        guard await build.wait(seconds: 120) == 0 else {
            directory.remove()
            throw StandInFailure(message: "the stand-in libcurl did not build: \(build.standardError)")
        }
        return directory
    }

    static func onPath(_ name: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    struct StandInFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
#endif
