import NotifyProtocol
import Testing

struct DurationTextTests {
    @Test(arguments: [
        ("90", 90.0),
        ("90s", 90.0),
        ("15m", 900.0),
        ("24h", 86_400.0),
        ("7d", 604_800.0),
        ("250ms", 0.25),
        ("1.5h", 5_400.0),
        ("0", 0.0),
        ("0s", 0.0),
        ("15M", 900.0),
        ("2H", 7_200.0),
        ("  10s ", 10.0),
    ])
    func parsesNumbersWithUnits(text: String, seconds: Double) {
        #expect(DurationText.parse(text) == seconds)
    }

    @Test func millisecondsAreNotMinutes() {
        #expect(DurationText.parse("5ms") == 0.005)
        #expect(DurationText.parse("5m") == 300)
    }

    @Test(arguments: ["", "s", "ms", "abc", "10x", "-5", "-5s", "5 m", "1h30m", "inf", "nan", "infs"])
    func refusesWhatIsNotADuration(text: String) {
        #expect(DurationText.parse(text) == nil)
    }
}
