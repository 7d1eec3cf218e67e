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

/// Path text as `NSString` does it: `join("dir", "a")` is "dir/a", `directory(of: "/a/b")`
/// is "/a", `name(of: "/a/b")` is "b".
public enum FilePath {
    public static func join(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    public static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let directory = trimmed[..<slash]
        return directory.isEmpty ? "/" : String(directory)
    }

    /// `$HOME`, else the home directory in the user database.
    public static func homeDirectory() -> String {
        if let home = getenv("HOME"), home.pointee != 0 { return String(cString: home) }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        return "/"
    }

    public static func name(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return trimmed == "/" ? "/" : String(trimmed[trimmed.index(after: slash)...])
    }
}
