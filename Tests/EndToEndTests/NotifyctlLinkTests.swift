import Foundation
import Testing

/// notifyctl does without Foundation's JSON coders and what they bring (`Data`, `URL`), and
/// without what links most of FoundationEssentials or the regex engine into it (`Date()`,
/// its string extensions such as `components(separatedBy:)`, the standard library's
/// `replacing`): a short-lived program that links them pays for their relocations at every
/// start, a quarter of a millisecond or more each (contrib/benchmarks/RESULTS.md). The
/// built binary names none of them; notifyd, which uses the coders, shows the check sees
/// such a reference.
@Suite struct NotifyctlLinkTests {
    static let avoided = ["$s20FoundationEssentials11JSONDecoderC", "$s20FoundationEssentials11JSONEncoderC",
                          "$s20FoundationEssentials4DataV", "$s20FoundationEssentials3URLV",
                          "$s20FoundationEssentials4DateVACycfC", "$sSy20FoundationEssentialsE", "$s17_StringProcessing"]

    /// The symbols `program` refers to or defines, as nm lists them.
    static func symbols(of program: String) async throws -> String {
        let listed = try await runCaptured(try ContribTool.nm.require(), [BuiltProducts.path(program)])
        #expect(listed.status == 0, "\(listed.error)")
        return listed.output
    }

    @Test func notifyctlLinksNoneOfFoundationsCoders() async throws {
        let notifyctl = try await Self.symbols(of: "notifyctl").split(separator: "\n")
        for prefix in Self.avoided {
            let found = notifyctl.filter { $0.contains(prefix) }
            #expect(found.isEmpty, "notifyctl refers to \(found.prefix(3).joined(separator: ", "))")
        }
        let notifyd = try await Self.symbols(of: "notifyd")
        #expect(notifyd.contains(Self.avoided[0]), "the check does not see notifyd's JSONDecoder")
    }
}
