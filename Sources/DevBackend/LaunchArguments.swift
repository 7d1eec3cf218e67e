#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
extension DevBackend {
    /// What the command line asks for.
    public enum Command: Equatable, Sendable {
        case run(Options)
        case help
        case version
    }

    /// A command-line mistake, worded for the person who typed it.
    public struct UsageError: Error, CustomStringConvertible, Equatable, Sendable {
        public let message: String

        public var description: String { message }
    }

    public static let usage = """
        usage: notify-devbackend [--host ADDRESS] [--port N] [--android-name fcm|gcm|both|fcmv1]
                                 [--gone-status 500|410|404] [--escapes-text]
                                 [--accounts FILE] [--quiet] [--help] [--version]

        An in-memory, loopback stand-in for the AppBackend of the Notification Hubs
        tutorial "send push notifications to specific users", bugs included.

          --host ADDRESS       IPv4 address to bind (default 127.0.0.1)
          --port N             port to listen on; 0 picks a free one (default 0)
          --android-name NAME  platform name the upsert accepts for Android: fcm
                               (default, newer tutorial), gcm (older), both, or
                               fcmv1: the tutorial updated for FCM v1, which knows
                               wns, apns and fcmv1 only (registrations under other
                               names get 400 "Unsupported platform", sends 500)
          --gone-status CODE   answer to an upsert of an unknown or expired id:
                               500 (default, what the tutorial does), 410 or 404
          --escapes-text       model a fixed backend that escapes the message text
          --accounts FILE      users with a password of their own, one USER:PASSWORD
                               per line (anyone else logs in with their user name as
                               the password, the tutorial's rule); a file, so that no
                               password is on a command line
          --quiet              print only the first line
          --help               show this help
          --version            show the version

        The first line on standard output is "notify-devbackend listening on
        http://HOST:PORT". Inspection and fault injection: GET /_dev/state,
        POST /_dev/reset, GET|POST|DELETE /_dev/faults, POST /_dev/expire/{id}.
        """

    /// Parses the arguments after the program name. Accepts `--flag value` and `--flag=value`.
    public static func parseArguments(_ arguments: [String]) throws(UsageError) -> Command {
        var options = Options(logRequests: true)
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else {
                    throw UsageError(message: "\(flag) needs a value")
                }
                return next
            }
            func noValue() throws(UsageError) {
                if inlineValue != nil { throw UsageError(message: "\(flag) takes no value") }
            }
            switch flag {
            case "--help", "-h":
                try noValue()
                return .help
            case "--version":
                try noValue()
                return .version
            case "--host":
                options.host = try value()
                guard isIPv4Address(options.host) else {
                    throw UsageError(message: "--host needs an IPv4 address such as 127.0.0.1, not '\(options.host)'")
                }
            case "--port":
                let text = try value()
                guard let port = Int(text), (0...65_535).contains(port) else {
                    throw UsageError(message: "--port needs a number from 0 to 65535, not '\(text)'")
                }
                options.port = port
            case "--android-name":
                let text = try value()
                guard let name = AndroidPlatformName(rawValue: text) else {
                    throw UsageError(message: "--android-name must be fcm, gcm, both or fcmv1, not '\(text)'")
                }
                options.androidPlatformName = name
            case "--gone-status":
                let text = try value()
                guard let status = Int(text), [500, 410, 404].contains(status) else {
                    throw UsageError(message: "--gone-status must be 500, 410 or 404, not '\(text)'")
                }
                options.goneStatus = status
            case "--escapes-text":
                try noValue()
                options.escapesText = true
            case "--accounts":
                options.accounts = try accounts(in: try value())
            case "--quiet":
                try noValue()
                options.quiet = true
                options.logRequests = false
            default:
                throw UsageError(message: "unknown argument '\(argument)'")
            }
        }
        return .run(options)
    }

    private static func accounts(in path: String) throws(UsageError) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw UsageError(message: "--accounts: cannot read '\(path)'")
        }
        var accounts: [String: String] = [:]
        for (number, line) in text.split(separator: "\n").enumerated() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw UsageError(message: "--accounts: \(path):\(number + 1) is not USER:PASSWORD")
            }
            accounts[String(line[..<colon])] = String(line[line.index(after: colon)...])
        }
        return accounts
    }

    private static func isIPv4Address(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                && Int(part).map { $0 <= 255 } == true
        }
    }
}
