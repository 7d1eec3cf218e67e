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
import Dispatch
import NotifySystem
import Synchronization

/// Writes log lines to standard error from a thread of its own, so that a log nobody
/// reads (a FIFO whose reader stopped, a terminal on hold) never blocks the socket loop
/// or an actor: those only hand a line over. What waits to be written is bounded
/// (`bufferLimit`); past it, lines are dropped and counted, and once writing goes on
/// again the log says how many ("N log lines dropped: the log file is not being read").
/// Lines whose write failed (a full disk) are counted and said the same way. Lines keep
/// their order, each written whole in one `write`, so lines never interleave.
public final class LogWriter: Sendable {
    public static let bufferLimit = 256 * 1024

    private struct State {
        var lines: [[UInt8]] = []
        var bytes = 0
        var dropped = 0
        /// Taken by the thread and not yet written.
        var writing = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)
    private let fd: Int32
    /// A line of the log's own, formatted as the logger formats its lines.
    private let notice: @Sendable (String) -> [UInt8]

    public init(fd: Int32 = 2, notice: @escaping @Sendable (String) -> [UInt8]) {
        self.fd = fd
        self.notice = notice
        NativeThread.start(name: "notifyd-log") { [self] in run() }
    }

    /// Hands `line` over; never waits. Dropped, and counted, while the lines waiting to be
    /// written would pass `bufferLimit`.
    public func enqueue(_ line: [UInt8]) {
        let wake = state.withLock { state -> Bool in
            guard state.bytes + line.count <= Self.bufferLimit else {
                state.dropped += 1
                return false
            }
            state.lines.append(line)
            state.bytes += line.count
            return state.lines.count == 1
        }
        if wake { ready.signal() }
    }

    /// Returns once every line handed over is written, or after `seconds`: before notifyd
    /// exits, so its last lines are not lost to a log that is read.
    public func flush(within seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if state.withLock({ $0.lines.isEmpty && !$0.writing }) { return }
            usleep(1000)
        }
    }

    private func run() {
        var failed = 0
        var failure: Int32 = 0
        while true {
            ready.wait()
            while true {
                let (lines, dropped) = state.withLock { state -> ([[UInt8]], Int) in
                    defer {
                        state.lines = []
                        state.bytes = 0
                        state.dropped = 0
                    }
                    state.writing = !state.lines.isEmpty || state.dropped > 0
                    return (state.lines, state.dropped)
                }
                guard !lines.isEmpty || dropped > 0 else { break }
                for line in lines {
                    if let error = writeWhole(line) {
                        failed += 1
                        failure = error
                    } else if failed > 0, writeWhole(notice("\(failed) log lines lost: writing the log failed (\(String(cString: strerror(failure))))")) == nil {
                        failed = 0
                    }
                }
                if dropped > 0 {
                    _ = writeWhole(notice("\(dropped) log lines dropped: the log file is not being read"))
                }
                state.withLock { $0.writing = false }
            }
        }
    }

    /// Nil once written whole, else the error.
    private func writeWhole(_ bytes: [UInt8]) -> Int32? {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count < 0 ? errno : EIO }
            written += count
        }
        return nil
    }
}
