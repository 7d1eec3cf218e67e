@testable import NotifyDaemon
import Testing

/// The clients' share of the open-file limit: what the daemon keeps for itself comes first.
@Suite struct OpenFileLimitTests {
    @Test func clientsGetWhatIsLeftUpToWhatWasAskedFor() {
        #expect(OpenFileLimit.clientShare(of: 65536, wanted: 1024, keeping: 104) == 1024)
        #expect(OpenFileLimit.clientShare(of: 1024, wanted: 1024, keeping: 104) == 920)
        #expect(OpenFileLimit.clientShare(of: 1128, wanted: 1024, keeping: 104) == 1024)
        #expect(OpenFileLimit.clientShare(of: 1127, wanted: 1024, keeping: 104) == 1023)
    }

    @Test func evenATinyLimitLetsOneClientInToHearWhy() {
        #expect(OpenFileLimit.clientShare(of: 106, wanted: 1024, keeping: 104) == 2)
        #expect(OpenFileLimit.clientShare(of: 105, wanted: 1024, keeping: 104) == 1)
        #expect(OpenFileLimit.clientShare(of: 104, wanted: 1024, keeping: 104) == 1)
        #expect(OpenFileLimit.clientShare(of: 20, wanted: 1024, keeping: 104) == 1)
    }
}
