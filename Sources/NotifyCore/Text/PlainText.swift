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

// Small text and path operations that Foundation has and FoundationEssentials does not:
// notifyd links FoundationEssentials alone, which keeps ICU's data and Foundation's code
// out of the process.

extension StringProtocol {
    /// Without spaces and tabs (any horizontal white space) at either end.
    public func trimmingSpaces() -> String {
        trimming { $0.isWhitespace && !$0.isNewline }
    }

    /// Without the characters `isTrimmed` picks at either end.
    public func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }

    /// The last occurrence of `needle`, or nil.
    func lastRange(of needle: String) -> Range<Index>? {
        ranges(of: needle).last
    }
}

/// `printf`-style formatting of numbers, through the C library.
public enum CFormat {
    public static func string(_ format: String, _ arguments: any CVarArg...) -> String {
        withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 128)
            let written = vsnprintf(&buffer, buffer.count, format, list)
            guard written >= 0 else { return "" }
            return String(decoding: buffer.prefix(min(Int(written), buffer.count - 1)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}

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

/// Names the calling thread, as `top -H` and a debugger show it (Linux keeps 15 bytes).
private func nameThisThread(_ name: String) {
    #if canImport(Glibc)
    // Glibc declares it only under _GNU_SOURCE, which Swift's import of it does not set.
    typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    guard let symbol = dlsym(nil, "pthread_setname_np") else { return }
    _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), String(name.utf8.prefix(15)) ?? "notifyd")
    #else
    _ = pthread_setname_np(name)
    #endif
}

/// A thread of our own (FoundationEssentials has no `Thread`), for the loops that block in
/// `poll()`: the socket server and the HTTP client.
public enum NativeThread {
    /// Runs blocking work (a file read, an open) on a thread of its own and waits for it
    /// without holding one of the concurrency pool's few threads.
    public static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            start(name: name) { continuation.resume(returning: body()) }
        }
    }

    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            let name: String
            init(_ body: @escaping @Sendable () -> Void, _ name: String) {
                self.body = body
                self.name = name
            }
        }
        let box = Unmanaged.passRetained(Box(body, name)).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let created = pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            nameThisThread(box.name)
            box.body()
            return nil
        }, box)
        precondition(created == 0, "cannot start a thread: \(String(cString: strerror(created)))")
        #if canImport(Glibc)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
    }
}
