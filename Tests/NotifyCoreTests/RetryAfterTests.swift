import Foundation
import Testing
@testable import NotifyCore

struct RetryAfterTests {
    private let now = Date(timeIntervalSince1970: 1_445_412_420) // 2015-10-21T07:27:00Z

    @Test(arguments: [("120", 120.0), ("0", 0.0), ("  30 ", 30.0), ("3600", 3600.0)])
    func deltaSeconds(text: String, seconds: Double) {
        #expect(RetryAfter.parse(text, now: now) == seconds)
    }

    @Test func httpDateInTheFutureIsTheTimeUntilIt() {
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 60)
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 08:27:00 GMT", now: now) == 3600)
    }

    @Test func httpDateInThePastMeansNow() {
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == 0)
    }

    @Test func httpDateDoesNotDependOnTheDefaultNow() {
        let later = now.addingTimeInterval(30)
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:00 GMT", now: later) == 30)
    }

    /// RFC 9110 has recipients read the two obsolete forms too; a backend or proxy that
    /// still sends them means the same time.
    @Test(arguments: [
        "Wednesday, 21-Oct-15 07:28:00 GMT",
        "Wed Oct 21 07:28:00 2015",
        "Wed Oct 21 07:28:00  2015",
        "  Wed, 21 Oct 2015 07:28:00 GMT ",
    ])
    func everyFormOfAnHTTPDateIsRead(text: String) {
        #expect(RetryAfter.parse(text, now: now) == 60)
    }

    @Test func asctimePadsASingleDigitDayWithASpace() {
        #expect(RetryAfter.parse("Wed Oct  7 07:27:00 2015", now: Date(timeIntervalSince1970: 1_444_202_760)) == 60)
    }

    /// RFC 850's two-digit year is placed at most 50 years ahead of now.
    @Test(arguments: [("Sunday, 06-Nov-94 08:49:37 GMT", 1994), ("Friday, 01-Jan-65 00:00:00 GMT", 2065), ("Thursday, 01-Jan-66 00:00:00 GMT", 1966)])
    func aTwoDigitYearIsTheNearestThatIsNotFarAhead(text: String, year: Int) throws {
        let date = try #require(RetryAfter.httpDate(text, now: now))
        var seconds = time_t(date.timeIntervalSince1970)
        var fields = tm()
        _ = gmtime_r(&seconds, &fields)
        #expect(Int(fields.tm_year) + 1900 == year)
    }

    @Test(arguments: ["Wednesday, 21-Oct-2015 07:28:00 GMT", "Wednesday, 32-Oct-15 07:28:00 GMT", "Wed Foo 21 07:28:00 2015", "Wed Oct 21 7:28 2015", "Wed, Oct 21 07:28:00 2015"])
    func malformedObsoleteFormsAreNotDates(text: String) {
        #expect(RetryAfter.httpDate(text, now: now) == nil)
    }

    /// There but unreadable: a pause asked for without its length, which the backoff policy
    /// fills in. A 403 carrying it is throttling, not refused credentials.
    @Test(arguments: ["soon", "12abc", "Wednesday", "21 Oct 2015", "-1", "-120", "-0.5"])
    func aValueThatCannotBeReadIsAPauseOfUnsaidLength(text: String) {
        #expect(RetryAfter.parse(text, now: now) == 0)
    }

    @Test(arguments: [nil, "", "   "] as [String?])
    func absentOrEmptyIsNil(text: String?) {
        #expect(RetryAfter.parse(text, now: now) == nil)
    }
}
