#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One setting as given somewhere: in the config file (with its line), the environment
/// or a flag. `origin` is how a message points a person at it.
public struct SettingValue: Sendable, Equatable {
    public var key: String
    public var value: String
    public var origin: String

    public init(key: String, value: String, origin: String) {
        self.key = key
        self.value = value
        self.origin = origin
    }
}

/// A setting that could not be used, located precisely: `config:12: retry_min: ...`.
/// What a file holds reaches the message as it is written there, except its control
/// characters, which are shown escaped (`PrintableText`).
public struct SettingProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var origin: String
    public var key: String?
    public var message: String

    public var description: String {
        PrintableText.line("\(origin): " + (key.map { "\($0): " } ?? "") + message)
    }
}

/// The config file: `key = value` lines, `#` comments, blank lines; a value may be put in
/// double quotes to keep leading or trailing spaces or a `#`. Lines end with LF or CRLF.
public enum ConfigFile {
    /// More than any config file needs; a larger one is refused unread.
    public static let largestFile = FileContents.mebibyte

    /// Parses the file's bytes line by line, so that a line that is not UTF-8 is reported
    /// with its number and the offending byte, and the other lines are still read.
    public static func parse(_ bytes: [UInt8], path: String) -> (values: [SettingValue], problems: [SettingProblem]) {
        var values: [SettingValue] = []
        var problems: [SettingProblem] = []
        for (index, lineBytes) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let origin = "\(path):\(index + 1)"
            if let bad = firstInvalidUTF8(lineBytes) {
                problems.append(SettingProblem(origin: origin, key: nil, message: "byte \(CFormat.string("0x%02x", bad.byte)) (column \(bad.column)) is not UTF-8; the config file must be UTF-8 text"))
                continue
            }
            let rawLine = String(decoding: lineBytes, as: UTF8.self)
            let line = rawLine.trimming { ($0.isWhitespace && !$0.isNewline) || $0 == "\r" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                problems.append(SettingProblem(origin: origin, key: nil, message: "expected `key = value`, found '\(shortened(line))'"))
                continue
            }
            let key = line[..<equals].trimmingSpaces()
            var value = line[line.index(after: equals)...].trimmingSpaces()
            if value.hasPrefix("\"") {
                guard value.count >= 2, value.hasSuffix("\"") else {
                    problems.append(SettingProblem(origin: origin, key: key, message: "the quoted value has no closing quote"))
                    continue
                }
                value = String(value.dropFirst().dropLast())
            } else if let hash = value.firstRange(of: " #") {
                value = value[..<hash.lowerBound].trimmingSpaces()
            }
            guard !key.isEmpty else {
                problems.append(SettingProblem(origin: origin, key: nil, message: "a line starts with '=' and has no key"))
                continue
            }
            values.append(SettingValue(key: key, value: value, origin: origin))
        }
        return (values, problems)
    }

    /// The first byte of `line` that does not begin a well-formed UTF-8 sequence, and its
    /// column (counted in Unicode scalars, from 1).
    static func firstInvalidUTF8(_ line: ArraySlice<UInt8>) -> (byte: UInt8, column: Int)? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = line.makeIterator()
        var offset = line.startIndex
        var column = 1
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                offset += encoded.count
                column += 1
            case .emptyInput:
                return nil
            case .error:
                return (line[offset], column)
            }
        }
    }

    /// Whether `path` is the null device, which stands for an empty config file, as with
    /// `ssh -F /dev/null`: no settings from any file. It is a device, not a regular file, and
    /// everyone may write it, so it is recognised before the checks that would refuse it.
    public static func isNullDevice(_ path: String) -> Bool {
        var info = stat()
        var null = stat()
        guard stat(path, &info) == 0, stat("/dev/null", &null) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFCHR && (null.st_mode & S_IFMT) == S_IFCHR && info.st_rdev == null.st_rdev
    }

    /// One warning for each key the file gives again: the last line wins, as it always
    /// did, but silently it hid an edit made further up. Names both lines.
    public static func repeatedKeys(_ values: [SettingValue], path: String) -> [String] {
        var first: [String: String] = [:]
        var warnings: [String] = []
        for value in values {
            let line = value.origin.dropFirst(path.count + 1)
            if let earlier = first[value.key] {
                warnings.append(PrintableText.line("\(value.origin): \(value.key) is given again (first on line \(earlier)); this line's value is the one used"))
            } else {
                first[value.key] = String(line)
            }
        }
        return warnings
    }

    /// A line quoted in a message: enough to recognise it, not a screenful.
    private static func shortened(_ line: String) -> String {
        line.count > 80 ? line.prefix(80) + "…" : line
    }

    /// `--config`, else `$NOTIFYD_CONFIG`, else `$XDG_CONFIG_HOME/notifyd/config`, else
    /// `~/.config/notifyd/config`. `explicit` is true when the user named the file (then it
    /// must exist).
    public static func location(flag: String?, environment: [String: String]) -> (path: String, explicit: Bool) {
        if let flag, !flag.isEmpty { return (flag, true) }
        if let fromEnvironment = environment["NOTIFYD_CONFIG"], !fromEnvironment.isEmpty { return (fromEnvironment, true) }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return (config + "/notifyd/config", false) }
        let home = environment["HOME"] ?? FilePath.homeDirectory()
        return (home + "/.config/notifyd/config", false)
    }
}
