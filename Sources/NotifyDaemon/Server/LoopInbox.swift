#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket
import Synchronization
import NotifySystem

/// How the rest of the daemon talks to the event-loop thread: messages under a lock, and
/// one byte down a pipe that the loop polls, written only when the inbox goes from empty
/// to not empty, so a burst of replies costs one wake-up.
final class LoopInbox: Sendable {
    enum Message: Sendable {
        /// Replies by their request's sequence number on the connection.
        case replies(connection: Int, [(UInt64, [UInt8])])
        case watch(connection: Int)
        case event([UInt8])
        /// Work finished elsewhere (the outbox emptied): activity for the quiet timer.
        case activity
        case stopAccepting(CheckedContinuation<Void, Never>)
        case drain(grace: Double, CheckedContinuation<Void, Never>)
    }

    private struct Queue {
        var messages: [Message] = []
        /// Set when the loop has ended: nothing will take messages any more.
        var closed = false
    }
    private let queue = Mutex(Queue())
    let readFD: Int32
    private let writeFD: Int32

    init() throws(SocketError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError(.io, "cannot create a pipe: \(errnoText())") }
        for fd in fds {
            setCloseOnExec(fd)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    /// False when the loop has ended and will never see the message.
    @discardableResult
    func post(_ message: Message) -> Bool {
        let wasEmpty = queue.withLock { queue -> Bool? in
            guard !queue.closed else { return nil }
            queue.messages.append(message)
            return queue.messages.count == 1
        }
        guard let wasEmpty else { return false }
        if wasEmpty {
            var byte: UInt8 = 1
            _ = retryingOnInterrupt { write(writeFD, &byte, 1) }
        }
        return true
    }

    /// Called by the loop when the pipe is readable: empties the pipe first, so a post
    /// that finds the queue empty afterwards always leaves a byte for the next poll.
    func take() -> [Message] {
        var sink = [UInt8](repeating: 0, count: 64)
        while retryingOnInterrupt({ read(readFD, &sink, sink.count) }) > 0 {}
        return queue.withLock { queue in
            defer { queue.messages = [] }
            return queue.messages
        }
    }

    /// Called by the loop as it ends: later posts are refused, and what was posted but
    /// not taken is returned, so that waiters can still be resumed.
    func close() -> [Message] {
        queue.withLock { queue in
            queue.closed = true
            defer { queue.messages = [] }
            return queue.messages
        }
    }

    // Closed only when nothing can post any more: a late reply written to a closed and
    // reused descriptor would land in some other file.
    deinit {
        closeDescriptor(readFD)
        closeDescriptor(writeFD)
    }
}
