import Foundation
import Testing

/// The licence is stated where each reader looks: LICENSE at the top, the README,
/// Package.swift's header, and the Debian package's machine-readable copyright file.
@Suite struct LicenseTests {
    static func text(_ path: String) throws -> String {
        try String(contentsOf: SettingDocumentationTests.repository.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theApacheLicenseIsStatedWhereEachReaderLooks() throws {
        let license = try Self.text("LICENSE")
        #expect(license.contains("Apache License") && license.contains("Version 2.0, January 2004"))
        #expect(license.contains("END OF TERMS AND CONDITIONS"), "the whole text, not a pointer to it")
        #expect(try Self.text("README.md").contains("Apache License, Version 2.0: see [LICENSE](LICENSE)"))
        #expect(try Self.text("Package.swift").contains("Licensed under the Apache License, Version 2.0: see LICENSE."))
    }

    /// DEP-5: a Format line, a Files: * paragraph, and each License named in it defined
    /// in a stand-alone paragraph.
    @Test func theDebianCopyrightFileIsMachineReadable() throws {
        let copyright = try Self.text("contrib/debian/copyright")
        let paragraphs = copyright.components(separatedBy: "\n\n").map { $0.split(separator: "\n").map(String.init) }
        #expect(paragraphs.first?.first == "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
        let files = paragraphs.filter { $0.first?.hasPrefix("Files:") == true }
        #expect(files.contains { $0.first == "Files: *" })
        let named = Set(files.flatMap { $0 }.filter { $0.hasPrefix("License: ") })
        let defined = Set(paragraphs.filter { $0.first?.hasPrefix("License: ") == true && $0.count > 1 }.compactMap(\.first))
        #expect(named == ["License: Apache-2.0"] && named.isSubset(of: defined), "named \(named), defined \(defined)")
        #expect(!copyright.contains("reserve all rights"))
    }
}
