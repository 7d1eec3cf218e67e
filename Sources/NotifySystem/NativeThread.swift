#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread of our own, for work that blocks: the loops that wait in `poll()` (the socket
/// server, the HTTP client, the dev backend's connections), the file writer, the child
/// reaper, and notifyctl's blocking socket calls made from Swift concurrency. It is a
/// plain detached pthread: FoundationEssentials has no `Thread`, and Foundation's would
/// bring all of Foundation into notifyd.
public enum NativeThread {
    /// Starts `body` on a new thread named `name`. A daemon that cannot get one of its few
    /// threads cannot work, so it stops here with the reason.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let error = spawn(name: name, body)
        precondition(error == 0, "cannot start a thread: \(String(cString: strerror(error)))")
    }

    /// Runs blocking work (a file read, an open) on a thread of its own, or here when no
    /// thread can be had, and waits for it without holding one of the concurrency pool's
    /// few threads.
    public static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            startOrRunHere(name: name) { continuation.resume(returning: body()) }
        }
    }

    /// Starts `body` on a new thread, or runs it here when no thread can be had: for a
    /// caller that must get an answer either way.
    public static func startOrRunHere(name: String, _ body: @escaping @Sendable () -> Void) {
        if spawn(name: name, body) != 0 { body() }
    }

    /// 0, or the error pthread_create gave.
    private static func spawn(name: String, _ body: @escaping @Sendable () -> Void) -> Int32 {
        final class Box: Sendable {
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
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            return created
        }
        #if canImport(Glibc)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
        return 0
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
