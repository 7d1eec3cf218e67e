#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits what a blocking socket delivers into `\n`-terminated lines, refusing lines
/// longer than a limit without buffering them.
public final class LineReader {
    public enum Item: Equatable {
        case line([UInt8])
        /// A line went past the limit; the stream cannot be resynchronised, so the
        /// caller should answer once and close.
        case tooLong
        /// The peer closed (a final unterminated line is returned as `.line` first).
        case end
        /// The deadline passed, a read timed out (SO_RCVTIMEO), or a read failed.
        case failed(String)
    }

    private let fd: Int32
    private let maximumLength: Int
    private var buffer: [UInt8] = []
    private var scanned = 0
    private var finished = false

    public init(fd: Int32, maximumLength: Int) {
        self.fd = fd
        self.maximumLength = maximumLength
    }

    /// The next line. With a `deadline` (on `monotonicSeconds()`'s clock) the whole wait
    /// ends there, however the peer trickles its bytes: a timeout per read alone would let
    /// a peer that sends a byte now and then, or lines that are never the one awaited,
    /// keep the reader forever.
    public func next(deadline: Double? = nil) -> Item {
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                scanned = 0
                if line.count > maximumLength { return .tooLong }
                return .line(line)
            }
            scanned = buffer.count
            if buffer.count > maximumLength { return .tooLong }
            if finished {
                if buffer.isEmpty { return .end }
                let line = buffer
                buffer = []
                scanned = 0
                return .line(line)
            }
            if let deadline, !waitReadable(until: deadline) { return .failed(Self.timedOut) }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = chunk.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { read(fd, raw.baseAddress!, raw.count) }
            }
            if count < 0 {
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK { return .failed(Self.timedOut) }
                return .failed("read failed: \(errnoText(code))")
            }
            if count == 0 {
                finished = true
            } else {
                buffer.append(contentsOf: chunk[..<count])
            }
        }
    }

    public static let timedOut = "timed out waiting for notifyd to answer"

    /// Whether `fd` has something to read (or has ended) before `deadline`.
    private func waitReadable(until deadline: Double) -> Bool {
        while true {
            let remaining = deadline - monotonicSeconds()
            guard remaining > 0 else { return false }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining * 1000, 3_600_000).rounded(.up)))
            if ready > 0 { return true }
            // A failed poll is left to the read to report.
            if ready < 0 && errno != EINTR { return true }
        }
    }
}
