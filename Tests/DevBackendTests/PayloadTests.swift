@testable import DevBackend
import NotifyProtocol
import Testing

/// The pure pieces, checked directly where the HTTP tests would be indirect.
@Suite struct PayloadTests {
    @Test func jsonEscapingCoversQuotesBackslashesAndControls() {
        #expect(JSONStringText.escaped("a\"b\\c\nd\u{01}é\u{2028}") == #"a\"b\\c\nd\u0001é\u2028"#)
    }

    @Test func xmlEscapingCoversTheFiveEntities() {
        #expect(PayloadBuilder.escapedForXML(#"<a href="x">'&'</a>"#) == "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;")
    }

    @Test func validatorReadsWhatThePhoneWouldShow() {
        #expect(PayloadValidator.check(#"{"aps":{"alert":"x\u0041"}}"#, service: .apns) == .valid(displayedText: "xA"))
        #expect(PayloadValidator.check(#"{"aps":{"alert":1}}"#, service: .apns) != .valid(displayedText: "1"))
        #expect(PayloadValidator.check(#"{"data":{"text":"x"}}"#, service: .android) != .valid(displayedText: "x"))
        #expect(PayloadValidator.check("<toast><text>a<![CDATA[<b>]]></text></toast>", service: .wns) == .valid(displayedText: "a<b>"))
        #expect(PayloadValidator.check("<toast><visual/></toast>", service: .wns) != .valid(displayedText: ""))
    }

    @Test func percentDecodingKeepsPlusAndMalformedEscapes() {
        #expect(QueryString.percentDecoded("a+b%20c%3a%zz%") == "a+b c:%zz%")
        #expect(QueryString.value("TO_TAG", in: "pns=apns&to_tag=bob%40x") == "bob@x")
        #expect(QueryString.value("handle", in: "handle") == "")
        #expect(QueryString.value("handle", in: nil) == nil)
    }

    @Test func routesIgnoreCaseAndATrailingSlash() {
        let upsert = RouteMatch(method: "PUT", path: "/API/Register/12-3/")
        #expect(upsert?.route == .upsert && upsert?.id == "12-3")
        let send = RouteMatch(method: "POST", path: "/api/notifications")
        #expect(send?.route == .send && send?.id == nil)
        #expect(RouteMatch(method: "GET", path: "/api/register") == nil)
        #expect(RouteMatch(method: "PUT", path: "/api/register") == nil)
    }
}
