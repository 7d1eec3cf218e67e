#if !canImport(Darwin)
extension CurlLoop {
    /// The requests of one lane that wait for the one under way; broken once one was not
    /// answered with a 2xx, after which none of the lane goes out. Changed in place in
    /// `lanes` (`lanes[id]!`): a copy taken out and put back would copy its list each time.
    struct Lane {
        /// Oldest first, from `head` on: the next is taken without moving the rest.
        private var waiting: [Job] = []
        private var head = 0
        var busy = false
        var broken = false

        mutating func append(_ job: Job) {
            waiting.append(job)
        }

        /// The request under way is back: the next one to start if it was accepted, or,
        /// if it was not, the lane breaks and what waited comes back unsent.
        mutating func finished(accepted: Bool) -> (next: Job?, skipped: [Job]) {
            guard accepted else {
                busy = false
                broken = true
                return (nil, takeAll())
            }
            guard head < waiting.count else {
                busy = false
                return (nil, [])
            }
            let next = waiting[head]
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            }
            return (next, [])
        }

        mutating func takeAll() -> [Job] {
            defer {
                waiting = []
                head = 0
            }
            return Array(waiting[head...])
        }
    }
}
#endif
