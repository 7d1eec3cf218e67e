// A collection keeps the storage of the largest size it ever had, even once empty: after a
// burst of a thousand sends, the tables that tracked them would hold their peak size for
// the rest of the daemon's life, pinning the heap pages they sit in. Where a table empties
// at the end of a burst, it lets its storage go.

extension Dictionary {
    /// Frees the storage when nothing is left in it; the next insertion allocates anew.
    mutating func releaseStorageIfEmpty() {
        if isEmpty && capacity > 0 { self = [:] }
    }
}

extension Set {
    mutating func releaseStorageIfEmpty() {
        if isEmpty && capacity > 0 { self = [] }
    }
}

extension Array {
    mutating func releaseStorageIfEmpty() {
        if isEmpty && capacity > 0 { self = [] }
    }
}
