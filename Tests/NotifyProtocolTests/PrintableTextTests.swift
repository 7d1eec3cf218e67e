import Foundation
import NotifyProtocol
import Testing

/// Text from elsewhere made fit for a terminal or a log line: control characters become
/// the JSON escapes that name them, everything else is left as it is.
@Suite struct PrintableTextTests {
    static let hostile = "a\nb\r\t\u{0}\u{1B}]0;t\u{07}\u{7F}\u{85}\u{9B}\u{2028}\u{2029}\u{202E}\u{2066}"

    @Test func aLineKeepsNoControlCharacter() {
        #expect(PrintableText.line(Self.hostile) == #"a\nb\r\t\u0000\u001B]0;t\u0007\u007F\u0085\u009B\u2028\u2029\u202E\u2066"#)
    }

    @Test func linesKeepTheirNewlinesOnly() {
        #expect(PrintableText.lines("one\ntwo\u{1B}[2J\r") == "one\ntwo\\u001B[2J\\r")
    }

    @Test(arguments: ["plain ASCII ~!@#$%^&*()", "é 日本 😀 👩‍💻 “quoted”", ""])
    func printableTextIsLeftAsItIs(text: String) {
        #expect(PrintableText.line(text) == text)
        #expect(PrintableText.lines(text) == text)
        #expect(PrintableText.jsonLine(text) == text)
    }

    /// JSON with the characters JSON lets through raw (DEL, C1, the separators) in its
    /// strings, and white space between its tokens: the line printed is still JSON, and
    /// means the same.
    @Test func aJSONLineStaysTheSameJSON() throws {
        let json = "{\"m\":\"DEL \u{7F} CSI \u{9B}2J LS \u{2028} RLO \u{202E}\",\t\"n\":1}\r"
        let printed = PrintableText.jsonLine(json)
        #expect(!printed.unicodeScalars.contains { PrintableText.isControl($0) })
        let original = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary
        let reread = try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? NSDictionary
        #expect(original != nil && original == reread)
    }
}
