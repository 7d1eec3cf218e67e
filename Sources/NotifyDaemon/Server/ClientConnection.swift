#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket
import NotifySystem

/// One client connection as the event loop sees it: a non-blocking socket, the bytes read
/// and not yet split into lines, the replies owed in request order, and the bytes waiting
/// to be written. Only the loop thread touches it.
final class ClientConnection {
    let fd: Int32
    let number: Int
    /// Runs request lines one at a time, in order.
    let runner: RequestRunner
    /// Lines read in this pass of the loop, handed to the runner together.
    private var batch: [RequestRunner.Request] = []

    private var input: [UInt8] = []
    /// Bytes of `input` already split off as lines.
    private var consumed = 0
    /// Bytes of `input` after `consumed` known to hold no newline.
    private var scanned = 0

    /// Replies owed, oldest first: nil until the command's reply arrives.
    private var owed: [UInt64: [UInt8]] = [:]
    private var nextSequence: UInt64 = 0
    private var nextToWrite: UInt64 = 0
    /// Requests handed to the runner whose replies have not arrived: commands that may
    /// still be changing what a later request on this connection would see.
    private(set) var commandsRunning = 0

    private var output: [UInt8] = []
    private var written = 0

    /// The peer sent EOF, the line limit was hit or the server is stopping: the socket
    /// is not read again (lines already read are still answered, unless stopping).
    private(set) var readClosed = false
    /// Set by `refuseRest`: close once what is owed has been written.
    private(set) var closeWhenDrained = false
    private(set) var watching = false
    /// Events dropped since the watcher fell behind; reported with one overflow line.
    private var droppedEvents = 0
    /// When the output went over the high-water mark without being drained since.
    private(set) var stalledSince: Double?
    /// The requests in flight reached their bound and have not fallen to half of it yet.
    private var refilling = false

    init(fd: Int32, number: Int, runner: RequestRunner) {
        self.fd = fd
        self.number = number
        self.runner = runner
    }

    var unsentBytes: Int { output.count - written }
    var requestsInFlight: Int { Int(nextSequence - nextToWrite) }
    var isDone: Bool { readClosed && consumed >= input.count && requestsInFlight == 0 && unsentBytes == 0 }

    /// Whether another request may start: the backpressure rule. Once the requests in
    /// flight reach their bound, none is taken until half of them are answered: a client
    /// pipelining more than the bound then has its next requests read and started
    /// together (one group commit for a burst of sends), not one at a time as each reply
    /// goes out.
    func canTakeRequest(_ limits: ServerLimits) -> Bool {
        guard !closeWhenDrained && unsentBytes < limits.outputHighWater else { return false }
        if requestsInFlight >= limits.maximumRequestsInFlight {
            refilling = true
        } else if refilling && requestsInFlight <= limits.maximumRequestsInFlight / 2 {
            refilling = false
        }
        return !refilling
    }

    func wantsToRead(_ limits: ServerLimits) -> Bool {
        !readClosed && canTakeRequest(limits)
    }

    enum ReadOutcome {
        case more
        case closed
        case failed
    }

    /// Reads what the socket has, once, through the loop's scratch buffer. Lines are
    /// split off by `nextLine`.
    func readAvailable(into scratch: UnsafeMutableRawBufferPointer) -> ReadOutcome {
        let count = retryingOnInterrupt { recv(fd, scratch.baseAddress!, scratch.count, Int32(MSG_DONTWAIT)) }
        if count > 0 {
            if consumed > 0 && consumed >= input.count / 2 {
                input.removeSubrange(..<consumed)
                scanned -= consumed
                consumed = 0
            }
            input.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            return .more
        }
        if count == 0 {
            readClosed = true
            return .closed
        }
        return errno == EAGAIN || errno == EWOULDBLOCK ? .more : .failed
    }

    enum Line {
        case request([UInt8])
        case tooLong
    }

    /// The next complete line, skipping blank ones, while the limits allow another request.
    func nextLine(_ limits: ServerLimits) -> Line? {
        while canTakeRequest(limits) {
            let found: Int? = input.withUnsafeBufferPointer { buffer in
                guard scanned < buffer.count, let base = buffer.baseAddress else { return nil }
                guard let hit = memchr(base + scanned, 0x0A, buffer.count - scanned) else { return nil }
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }
            guard let newline = found else {
                scanned = input.count
                if input.count - consumed > limits.maximumLineLength { return .tooLong }
                if readClosed && consumed < input.count {
                    // A last line without its newline still counts.
                    let line = Array(input[consumed...])
                    consumed = input.count
                    scanned = consumed
                    if !Self.isBlank(line[...]) { return .request(line) }
                }
                return nil
            }
            let line = input[consumed..<newline]
            consumed = newline + 1
            scanned = consumed
            if line.count > limits.maximumLineLength { return .tooLong }
            if Self.isBlank(line) { continue }
            return .request(Array(line))
        }
        return nil
    }

    private static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }
    }

    /// Reserves a request's place in the reply order; `startBatch` hands it to the runner.
    func dispatch(_ line: [UInt8]) {
        batch.append(RequestRunner.Request(sequence: nextSequence, line: line))
        nextSequence += 1
        commandsRunning += 1
    }

    func startBatch() {
        guard !batch.isEmpty else { return }
        runner.add(batch)
        batch = []
    }

    /// Takes a reply made at once, in its place in the order: straight to the output when
    /// nothing is owed ahead of it, else after the replies still to come.
    func answer(_ reply: [UInt8]) {
        if nextToWrite == nextSequence {
            output.append(contentsOf: reply)
            nextSequence += 1
            nextToWrite += 1
        } else {
            owed[nextSequence] = reply
            nextSequence += 1
        }
    }

    /// Answers in order what nothing will run (a line too long): later lines are not read.
    func refuseRest(with reply: [UInt8]) {
        owed[nextSequence] = reply
        nextSequence += 1
        closeWhenDrained = true
        stopReading()
        moveOwedRepliesToOutput()
    }

    /// Reads no more and forgets lines read but not started; what was started is answered.
    func stopReading() {
        readClosed = true
        input = []
        consumed = 0
        scanned = 0
    }

    func replyArrived(sequence: UInt64, bytes: [UInt8]) {
        guard sequence >= nextToWrite else { return }
        commandsRunning -= 1
        owed[sequence] = bytes
        moveOwedRepliesToOutput()
    }

    private func moveOwedRepliesToOutput() {
        while let bytes = owed.removeValue(forKey: nextToWrite) {
            output.append(contentsOf: bytes)
            nextToWrite += 1
        }
    }

    func startWatching() { watching = true }

    /// Queues an event line, or drops it while the watcher is behind.
    func event(_ bytes: [UInt8], limits: ServerLimits) {
        guard watching, !closeWhenDrained else { return }
        if unsentBytes + bytes.count > limits.eventBacklog {
            droppedEvents += 1
            return
        }
        reportOverflow()
        output.append(contentsOf: bytes)
    }

    private func reportOverflow() {
        guard droppedEvents > 0 else { return }
        output.append(contentsOf: Array("{\"dropped\":\(droppedEvents),\"event\":\"overflow\"}\n".utf8))
        droppedEvents = 0
    }

    enum WriteOutcome {
        case drained
        case blocked
        case failed
    }

    /// Writes what the socket takes now, without blocking.
    func flush(now: Double, limits: ServerLimits) -> WriteOutcome {
        let before = written
        while written < output.count {
            let count = output.withUnsafeBytes { raw in
                retryingOnInterrupt { send(fd, raw.baseAddress! + written, raw.count - written, sendFlags | Int32(MSG_DONTWAIT)) }
            }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                return .failed
            }
            written += count
        }
        let progressed = written > before
        if written == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            written = 0
            if droppedEvents > 0 {
                reportOverflow()
                return flush(now: now, limits: limits)
            }
        } else if written >= 64 * 1024 && written >= output.count / 2 {
            output.removeSubrange(..<written)
            written = 0
        }
        if unsentBytes >= limits.outputHighWater {
            // Any progress restarts the clock: only a client that takes nothing is stalled.
            if stalledSince == nil || progressed { stalledSince = now }
        } else {
            stalledSince = nil
        }
        return unsentBytes == 0 ? .drained : .blocked
    }

    func close() {
        closeDescriptor(fd)
    }
}
