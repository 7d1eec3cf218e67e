import Foundation

/// The tutorial's `AuthenticationTestHandler`, faithfully including its flaws.
enum BasicAuth {
    enum Outcome: Equatable {
        case accepted(user: String)
        /// The handler's own rejection: 403, no challenge.
        case forbidden
        /// The handler threw (ASP.NET answers 500); the text names the .NET exception.
        case threw(exceptionType: String, message: String)

        var user: String? {
            if case .accepted(let user) = self { return user }
            return nil
        }
    }

    /// `accounts` stand for a real backend's user list: a user named there is accepted with
    /// that password only; anyone else meets the tutorial's rule.
    static func evaluate(_ header: String?, accounts: [String: String] = [:]) -> Outcome {
        // `Headers.GetValues("Authorization").First()` throws when the header is absent.
        guard let header else {
            return .threw(
                exceptionType: "System.InvalidOperationException",
                message: "The given header was not found."
            )
        }
        let scheme = "Basic "
        guard header.count >= scheme.count, header.prefix(scheme.count).lowercased() == scheme.lowercased() else {
            return .forbidden
        }
        // Convert.FromBase64String skips whitespace but insists on valid padding.
        let encoded = String(header.dropFirst(scheme.count).filter { !$0.isWhitespace })
        guard let data = Data(base64Encoded: encoded) else {
            return .threw(
                exceptionType: "System.FormatException",
                message: "The input is not a valid Base-64 string."
            )
        }
        let decoded = String(decoding: data, as: UTF8.self)
        // Split(':') on every colon and keep [0] and [1]: a password containing ':'
        // is cut short, and text without ':' indexes past the end and throws.
        let parts = decoded.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 2 else {
            return .threw(
                exceptionType: "System.IndexOutOfRangeException",
                message: "Index was outside the bounds of the array."
            )
        }
        let user = String(parts[0])
        let password = String(parts[1])
        if let expected = accounts[user] {
            return password == expected ? .accepted(user: user) : .forbidden
        }
        // The tutorial's VerifyUserAndPwd: a demo rule, not authentication.
        return user == password ? .accepted(user: user) : .forbidden
    }
}
