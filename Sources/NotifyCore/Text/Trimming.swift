// What Foundation's trimming does, which FoundationEssentials lacks: notifyd links
// FoundationEssentials alone, which keeps ICU's data and Foundation's code out of the process.

extension StringProtocol {
    /// Without spaces and tabs (any horizontal white space) at either end.
    public func trimmingSpaces() -> String {
        trimming { $0.isWhitespace && !$0.isNewline }
    }

    /// Without the characters `isTrimmed` picks at either end.
    public func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }

    /// The last occurrence of `needle`, or nil.
    func lastRange(of needle: String) -> Range<Index>? {
        ranges(of: needle).last
    }
}
