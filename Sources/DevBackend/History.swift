/// The last `limit` items appended, oldest first.
///
/// A ring, so that a backend past its limit drops its oldest item in constant time: a demo
/// or benchmark backend left running must not slow down as its history fills (an array's
/// `removeFirst` would move every item at every request).
struct History<Element: Sendable>: Sendable {
    let limit: Int
    private var storage: [Element] = []
    /// Where the oldest item is, once `storage` is full.
    private var oldest = 0

    init(limit: Int) {
        precondition(limit > 0, "a history keeps at least one item")
        self.limit = limit
    }

    var count: Int { storage.count }

    var elements: [Element] {
        oldest == 0 ? storage : Array(storage[oldest...] + storage[..<oldest])
    }

    mutating func append(_ element: Element) {
        if storage.count < limit {
            storage.append(element)
        } else {
            storage[oldest] = element
            oldest = (oldest + 1) % limit
        }
    }

    mutating func removeAll() {
        storage.removeAll()
        oldest = 0
    }
}
