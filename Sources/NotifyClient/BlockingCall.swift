import Dispatch

/// Runs blocking client I/O on its own thread, for callers inside Swift concurrency
/// (whose few shared threads must never block on a socket).
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = DedicatedThread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A detached pthread running one closure (Foundation's Thread would pull in Foundation).
private final class DedicatedThread: Sendable {
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let result = pthread_create(&thread, nil, { raw in
            let this = Unmanaged<DedicatedThread>.fromOpaque(raw!).takeRetainedValue()
            this.body()
            return nil
        }, box)
        if result != 0 {
            Unmanaged<DedicatedThread>.fromOpaque(box).release()
            // Could not get a thread: run inline rather than never answering.
            body()
            return
        }
        #if canImport(Glibc)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
    }
}
