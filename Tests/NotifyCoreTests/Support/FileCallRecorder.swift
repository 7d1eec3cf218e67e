import Foundation
import NotifyCore
import Synchronization

/// Wraps the system's file calls and records, in the order they happen, what each did to
/// which file under `root`, as steps such as `fsync outbox/5.json.tmp` or `fsync outbox/`
/// (a directory ends with `/`; a temporary file's random suffix is cut to `.tmp`). Other
/// events can be noted among them, such as a sender hearing its answer. Safe from any
/// thread: the stores may call it from a thread of their own.
final class FileCallRecorder: Sendable {
    private struct State {
        var steps: [String] = []
        /// What each open descriptor names.
        var names: [Int32: String] = [:]
    }

    private let root: String
    private let state = Mutex(State())

    init(root: String) {
        self.root = root.hasSuffix("/") ? root : root + "/"
    }

    var steps: [String] { state.withLock { $0.steps } }

    /// The steps that name a file or directory starting with `prefix`, and the notes.
    func steps(under prefix: String) -> [String] {
        steps.filter { step in
            step.hasPrefix("note ") || step.split(separator: " ").dropFirst().contains { $0.hasPrefix(prefix) }
        }
    }

    func note(_ event: String) {
        append("note " + event)
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
                let result = system.fsync(fd)
                self.keepingErrno { self.record("fsync", fd) }
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
                let result = system.unlink(path)
                self.keepingErrno { self.append("unlink \(self.name(path))") }
                return result
            })
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
    private func keepingErrno(_ body: () -> Void) {
        let saved = errno
        body()
        errno = saved
    }
}
