import Foundation
import Testing

/// What the Debian package tells its users agrees with what its maintainer scripts do:
/// the postinst enables notifyd.socket for every user, so the package's description and
/// README.Debian say so, and neither asks each user to enable it.
@Suite struct DebianPackageTextTests {
    @Test func theDescriptionSaysWhatThePostinstDoes() throws {
        let postinst = try LicenseTests.text("contrib/debian/postinst")
        #expect(postinst.contains("deb-systemd-helper --user enable notifyd.socket"), "the postinst enables the socket for every user")
        let control = try LicenseTests.text("contrib/debian/control.in")
        let description = control.components(separatedBy: "\nDescription: ").dropFirst().first ?? ""
        #expect(description.contains("enables notifyd.socket for every user"), "\(description)")
        #expect(!description.contains("--user enable"), "the description asks each user to enable what the package enabled: \(description)")
        let readme = try LicenseTests.text("contrib/debian/README.Debian")
        #expect(readme.contains("the package enables it\nglobally") || readme.contains("the package enables it globally"), "\(readme.prefix(400))")
        #expect(!readme.contains("--user enable"))
    }
}
