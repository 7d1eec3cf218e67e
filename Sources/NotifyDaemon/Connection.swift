import Foundation
import NotifySocket
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One client connection. A dedicated thread does the blocking reads (never the Swift
/// concurrency pool); writes come from replies and events, serialised by a lock so lines
/// never interleave.
final class Connection: Sendable {
    enum Incoming: Sendable {
        case line([UInt8])
        case tooLong
    }

    let fd: Int32
    let number: Int
    /// Set once the socket is closed; guards the fd against writes after close.
    private let closed = Mutex(false)

    init(fd: Int32, number: Int) {
        self.fd = fd
        self.number = number
        // A client that stops reading must not stall the daemon: give up on it after a while.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Starts the reader thread; lines arrive on the returned stream, which ends at EOF,
    /// on a read error, or right after `.tooLong`.
    func incoming(maximumLineLength: Int) -> AsyncStream<Incoming> {
        let (stream, continuation) = AsyncStream.makeStream(of: Incoming.self)
        let fd = self.fd
        let thread = Thread {
            let reader = LineReader(fd: fd, maximumLength: maximumLineLength)
            reading: while true {
                switch reader.next() {
                case .line(let bytes):
                    continuation.yield(.line(bytes))
                case .tooLong:
                    continuation.yield(.tooLong)
                    break reading
                case .end, .failed:
                    break reading
                }
            }
            continuation.finish()
        }
        thread.name = "notifyd-connection-\(number)"
        thread.start()
        return stream
    }

    /// Writes one whole line; false when the client is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        closed.withLock { isClosed in
            guard !isClosed else { return false }
            do {
                try UnixSocket.writeAll(fd, bytes)
                return true
            } catch {
                return false
            }
        }
    }

    /// Ends reading (the reader thread sees EOF) but lets pending replies be written.
    func stopReading() {
        _ = shutdown(fd, Int32(SHUT_RD))
    }

    func close() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            _ = shutdown(fd, Int32(SHUT_RDWR))
            _ = Glibc_or_Darwin_close(fd)
        }
    }
}

@inline(__always)
func Glibc_or_Darwin_close(_ fd: Int32) -> Int32 {
    close(fd)
}
