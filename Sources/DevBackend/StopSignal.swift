#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket
import NotifySystem
import Synchronization

/// A self-pipe that every blocked thread of the server polls alongside its socket.
///
/// A byte written to the pipe is never read, so once `trigger()` has run the read
/// end stays readable: the accept thread, idle connections and injected delays all
/// wake at once and keep seeing the signal, with no lost wake-ups.
final class StopSignal: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32
    private let triggered = Mutex(false)
    private let closed = Mutex(false)

    init() throws(HTTPServerError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw HTTPServerError("cannot create the stop pipe: \(errnoText())")
        }
        setCloseOnExec(fds[0])
        setCloseOnExec(fds[1])
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    var isTriggered: Bool { triggered.withLock { $0 } }

    func trigger() {
        let first = triggered.withLock { value in
            defer { value = true }
            return !value
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = retryingOnInterrupt { write(writeEnd, &byte, 1) }
    }

    /// Sleeps for `seconds` unless stopped first; returns false when stopped.
    func sleep(seconds: Double) -> Bool {
        guard seconds > 0 else { return !isTriggered }
        let deadline = monotonicSeconds() + seconds
        while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return !isTriggered }
            var entry = pollfd(fd: readEnd, events: pollReadable, revents: 0)
            let millis = Int32(min(remaining * 1000, Double(Int32.max)).rounded(.up))
            let ready = poll(&entry, 1, millis)
            if ready > 0 { return false }
            if ready < 0 && errno != EINTR { return !isTriggered }
        }
    }

    /// Releases the pipe; only after every thread that polls it has ended.
    func close() {
        let first = closed.withLock { value in
            defer { value = true }
            return !value
        }
        guard first else { return }
        closeDescriptor(readEnd)
        closeDescriptor(writeEnd)
    }
}
