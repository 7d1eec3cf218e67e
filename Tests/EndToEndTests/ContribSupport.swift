import Foundation
import NotifyTestSupport
import Testing

/// The files under contrib/ and the outside tools that check them.
enum Contrib {
    /// The repository's root, found from this file's path (Tests/EndToEndTests/...).
    static let repository: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String {
        repository.appendingPathComponent("contrib").appendingPathComponent(relative).path
    }

    static func read(_ relative: String) throws -> String {
        try String(contentsOfFile: path(relative), encoding: .utf8)
    }

    /// True when running under CI, where a missing tool is a failure, not a skip.
    static let isCI = ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false
}

/// An outside program a test needs, and the Debian package that provides it.
struct ContribTool: Sendable, CustomStringConvertible {
    let name: String
    let debianPackage: String
    /// Where the tool lives when not on $PATH (systemd's generators).
    var libexecDirectory: String? = nil

    static let systemdAnalyze = ContribTool(name: "systemd-analyze", debianPackage: "systemd")
    static let desktopFileValidate = ContribTool(name: "desktop-file-validate", debianPackage: "desktop-file-utils")
    static let python3 = ContribTool(name: "python3", debianPackage: "python3")
    static let bash = ContribTool(name: "bash", debianPackage: "bash")
    static let zsh = ContribTool(name: "zsh", debianPackage: "zsh")
    static let fish = ContribTool(name: "fish", debianPackage: "fish")
    static let socat = ContribTool(name: "socat", debianPackage: "socat")
    static let nm = ContribTool(name: "nm", debianPackage: "binutils")
    static let man = ContribTool(name: "man", debianPackage: "man-db")
    static let groff = ContribTool(name: "groff", debianPackage: "groff-base")
    static let xdgAutostartGenerator = ContribTool(name: "systemd-xdg-autostart-generator", debianPackage: "systemd",
                                                   libexecDirectory: "/usr/lib/systemd/user-generators")

    var description: String { "\(name) (Debian package \(debianPackage))" }

    /// The tool's absolute path from its directory or $PATH, or nil.
    var path: String? {
        let searchPath = (libexecDirectory.map { $0 + ":" } ?? "") + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
        for directory in searchPath.split(separator: ":") where !directory.isEmpty {
            let candidate = String(directory) + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Whether a test that needs this tool runs: always under CI (where a missing tool
    /// must fail the test, see `require()`), otherwise only when the tool is installed.
    var shouldRun: Bool { Contrib.isCI || path != nil }

    /// The tool's path; a recorded failure naming the package to install when it is missing.
    func require(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        if let path { return path }
        Issue.record("\(name) is not installed: install the Debian package \(debianPackage) (apt-get install -y \(debianPackage))", sourceLocation: sourceLocation)
        throw MissingTool(tool: self)
    }

    struct MissingTool: Error, CustomStringConvertible {
        let tool: ContribTool
        var description: String { "missing \(tool)" }
    }
}

/// A private temporary directory, short enough to hold a Unix socket path, removed by
/// `remove()`.
struct ContribScratch: Sendable {
    let path: String

    init(_ label: String = "c") throws {
        path = "/tmp/ndc-\(label)-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func sub(_ relative: String, create: Bool = true) throws -> String {
        let full = path + "/" + relative
        if create {
            try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return full
    }

    func write(_ relative: String, _ text: String, mode: Int = 0o644) throws -> String {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try writeFileClosingOnExec(full, text, mode: mode)
        return full
    }

    /// Every file, link and directory below, as paths relative to this directory.
    func listing(under relative: String = "") -> Set<String> {
        let root = relative.isEmpty ? path : path + "/" + relative
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var result = Set<String>()
        while let item = enumerator.nextObject() as? String { result.insert(item) }
        return result
    }

    func remove() {
        removeInTheBackground(path)
    }
}

/// Runs `body` with a scratch directory that is removed afterwards, whatever happens.
func withContribScratch<T>(_ label: String = "c", _ body: (ContribScratch) async throws -> T) async throws -> T {
    let scratch = try ContribScratch(label)
    do {
        let result = try await body(scratch)
        scratch.remove()
        return result
    } catch {
        scratch.remove()
        throw error
    }
}

/// What the built programs say about themselves in their --help, so that the tests of
/// the man pages and completions follow the code.
enum ContribHelp {
    /// Every long option named in a help text, like "--socket".
    static func longOptions(in text: String) -> Set<String> {
        Set(text.matches(of: /--[a-z][a-z0-9-]*[a-z0-9]/).map { String($0.output) })
    }

    /// The commands listed in `notifyctl --help`: indented lines "  name   summary" before
    /// the "Options:" heading.
    static func commands(inMainHelp text: String) -> [String] {
        var names: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("Options") { break }
            if let match = line.wholeMatch(of: #/\s\s([a-z][a-z-]*)\s\s+\S.*/#) { names.append(String(match.output.1)) }
        }
        return names
    }

    /// notifyctl's own options: those under the "Options:" heading of its --help (the
    /// command list above it mentions options of commands, like --password-stdin).
    static func notifyctlGlobalOptions() async throws -> Set<String> {
        let main = try await notifyctl(["--help"])
        guard let heading = main.range(of: "\nOptions:") else { return longOptions(in: main) }
        return longOptions(in: String(main[heading.upperBound...]))
    }

    static func notifyctl(_ arguments: [String]) async throws -> String {
        let result = try await runCaptured(BuiltProducts.path("notifyctl"), arguments)
        #expect(result.status == 0, "notifyctl \(arguments.joined(separator: " ")) failed: \(result.error)")
        return result.output
    }

    static func notifyd() async throws -> String {
        let result = try await runCaptured(BuiltProducts.path("notifyd"), ["--help"])
        #expect(result.status == 0, "notifyd --help failed: \(result.error)")
        return result.output
    }

    /// notifyctl's commands and, for each, the long options its --help names.
    static func notifyctlCommands() async throws -> [(name: String, options: Set<String>)] {
        let main = try await notifyctl(["--help"])
        let names = commands(inMainHelp: main)
        #expect(names.count >= 5, "could not find the command list in notifyctl --help:\n\(main)")
        var result: [(name: String, options: Set<String>)] = []
        for name in names {
            let help = try await notifyctl([name, "--help"])
            result.append((name, longOptions(in: help).subtracting(["--help"])))
        }
        return result
    }
}

/// Like `run`, but the program writes its standard output and error into files, read
/// once it has exited: nothing it wrote last can be missed, so "printed nothing" is a
/// safe check. The program is exec'd, so the process stopped on a timeout is the
/// program itself.
func runCaptured(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil, seconds: Double = 30) async throws -> (status: Int32, output: String, error: String) {
    let files = try ContribScratch("out")
    defer { files.remove() }
    let out = files.path + "/stdout"
    let err = files.path + "/stderr"
    let script = #"out=$1; err=$2; shift 2; exec "$@" >"$out" 2>"$err""#
    let result = try await run("/bin/sh", ["-c", script, "sh", out, err, executable] + arguments, environment: environment, stdin: stdin, seconds: seconds)
    let output = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    let error = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
    return (result.status, output, error + result.error)
}
