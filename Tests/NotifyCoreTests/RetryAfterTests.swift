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

    @Test(arguments: ["soon", "12abc", "Wednesday", "21 Oct 2015", "", "   "])
    func garbageIsNil(text: String) {
        #expect(RetryAfter.parse(text, now: now) == nil)
    }

    @Test(arguments: ["-1", "-120", "-0.5"])
    func negativeIsNil(text: String) {
        #expect(RetryAfter.parse(text, now: now) == nil)
    }

    @Test func absentHeaderIsNil() {
        #expect(RetryAfter.parse(nil, now: now) == nil)
    }
}
