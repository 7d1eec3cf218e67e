import Foundation
import NotifyCore
import Synchronization

/// Wraps the system's file calls and records, in the order they happen, what each did to
/// which file under `root`, as steps such as `fsync outbox/5.json.tmp` or `fsync outbox/`
/// (a directory ends with `/`; a temporary file's random suffix is cut to `.tmp`). Other
/// events can be noted among them, such as a sender hearing its answer. Safe from any
/// thread: the stores call it from their writer threads. An fsync or an unlink can be held,
/// as a slow disk would, to see what gathers meanwhile.
final class FileCallRecorder: Sendable {
    private struct State {
        var steps: [String] = []
        /// What each open descriptor names.
        var names: [Int32: String] = [:]
        /// The fsync or unlink whose step starts with this, after `holdSkipping` others, waits for `release()`.
        var holdPrefix: String?
        var holdSkipping = 0
        var holding = false
        /// The name of the thread each fsync was made on, in order.
        var syncThreads: [String] = []
    }

    private let root: String
    private let state = Mutex(State())
    private let released = DispatchSemaphore(value: 0)

    init(root: String) {
        self.root = root.hasSuffix("/") ? root : root + "/"
    }

    var steps: [String] { state.withLock { $0.steps } }

    /// The name of the thread each fsync was made on, in order.
    var syncThreads: [String] { state.withLock { $0.syncThreads } }

    /// The steps that name a file or directory starting with `prefix`, and the notes.
    func steps(under prefix: String) -> [String] {
        steps.filter { step in
            step.hasPrefix("note ") || step.split(separator: " ").dropFirst().contains { $0.hasPrefix(prefix) }
        }
    }

    func note(_ event: String) {
        append("note " + event)
    }

    /// The next fsync or unlink whose step starts with `prefix` (e.g. `fsync outbox/`), after
    /// `skipping` others, waits until `release()`, on the thread that makes it.
    func holdNext(_ prefix: String, skipping: Int = 0) {
        state.withLock { state in
            state.holdPrefix = prefix
            state.holdSkipping = skipping
        }
    }

    /// True while a held call waits.
    var isHolding: Bool { state.withLock { $0.holding } }

    func release() {
        released.signal()
    }

    var calls: FileSystemCalls {
        let system = FileSystemCalls.system
        return FileSystemCalls(
            open: { path, flags, mode in
                let fd = system.open(path, flags, mode)
                guard fd >= 0 else { return fd }
                self.keepingErrno {
                    let name = self.name(path)
                    self.state.withLock { $0.names[fd] = name }
                }
                return fd
            },
            write: { fd, bytes, count in
                let written = system.write(fd, bytes, count)
                self.keepingErrno { self.record("write", fd) }
                return written
            },
            fsync: { fd in
                self.waitIfHeld { "fsync \($0.names[fd] ?? "")" }
                let result = system.fsync(fd)
                self.keepingErrno {
                    self.record("fsync", fd)
                    let thread = currentThreadName()
                    self.state.withLock { $0.syncThreads.append(thread) }
                }
                return result
            },
            close: { fd in
                self.state.withLock { _ = $0.names.removeValue(forKey: fd) }
                return system.close(fd)
            },
            rename: { from, to in
                let result = system.rename(from, to)
                self.keepingErrno { self.append("rename \(self.name(from)) \(self.name(to))") }
                return result
            },
            unlink: { path in
                let name = self.keepingErrno { self.name(path) }
                self.waitIfHeld { _ in "unlink \(name)" }
                let result = system.unlink(path)
                self.keepingErrno { self.append("unlink \(name)") }
                return result
            })
    }

    private func waitIfHeld(_ step: (State) -> String) {
        let held = keepingErrno {
            state.withLock { state in
                guard let prefix = state.holdPrefix, step(state).hasPrefix(prefix) else { return false }
                guard state.holdSkipping == 0 else {
                    state.holdSkipping -= 1
                    return false
                }
                state.holdPrefix = nil
                state.holding = true
                return true
            }
        }
        guard held else { return }
        released.wait()
        state.withLock { $0.holding = false }
    }

    private func append(_ step: String) {
        state.withLock { $0.steps.append(step) }
    }

    private func record(_ call: String, _ fd: Int32) {
        state.withLock { state in
            state.steps.append("\(call) \(state.names[fd] ?? "fd \(fd)")")
        }
    }

    /// `path` relative to the root, `/` after a directory, `.tmp` for a temporary's suffix.
    private func name(_ path: String) -> String {
        var name = path.hasPrefix(root) ? String(path.dropFirst(root.count)) : path == String(root.dropLast()) ? "" : path
        if let marker = name.range(of: ".tmp-") { name = String(name[..<marker.lowerBound]) + ".tmp" }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            name = name.isEmpty ? "./" : name + "/"
        }
        return name
    }

    /// The stores read `errno` after a failed call: recording must not change it.
    private func keepingErrno<T>(_ body: () -> T) -> T {
        let saved = errno
        defer { errno = saved }
        return body()
    }
}

/// The calling thread's name, as `top -H` shows it.
private func currentThreadName() -> String {
    var name = [CChar](repeating: 0, count: 64)
    #if canImport(Glibc)
    // Glibc declares it only under _GNU_SOURCE, which Swift's import of it does not set.
    typealias GetName = @convention(c) (pthread_t, UnsafeMutablePointer<CChar>, Int) -> Int32
    guard let symbol = dlsym(nil, "pthread_getname_np") else { return "" }
    _ = unsafeBitCast(symbol, to: GetName.self)(pthread_self(), &name, name.count)
    #else
    _ = pthread_getname_np(pthread_self(), &name, name.count)
    #endif
    return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
