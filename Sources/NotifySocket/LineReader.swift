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
        /// A read timed out (SO_RCVTIMEO) or failed.
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

    public func next() -> Item {
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
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = chunk.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { read(fd, raw.baseAddress!, raw.count) }
            }
            if count < 0 {
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK { return .failed("timed out waiting for notifyd to answer") }
                return .failed("read failed: \(errnoText(code))")
            }
            if count == 0 {
                finished = true
            } else {
                buffer.append(contentsOf: chunk[..<count])
            }
        }
    }
}
