import Testing

/// A string test argument shown escaped (`"abc\n"`), so that `swift test` prints each test
/// case on one line even when the text holds line breaks.
public struct EscapedText: CustomTestStringConvertible, Sendable, ExpressibleByStringLiteral {
    public let text: String

    public init(_ text: String) { self.text = text }
    public init(stringLiteral text: String) { self.text = text }

    public var testDescription: String { text.debugDescription }
}
