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
               notify-devbackend --api installations (--api-key KEY | --api-key-file FILE)
                                 [--installations-android-name fcmv1|fcm] [--host ADDRESS]
                                 [--port N] [--escapes-text] [--quiet]

        An in-memory, loopback stand-in for the AppBackend of the Notification Hubs
        tutorial "send push notifications to specific users", bugs included; or, with
        --api installations, for the installation-based "backend service" (sample
        PushNotificationsAPI), quirks included.

          --host ADDRESS       IPv4 address to bind (default 127.0.0.1)
          --port N             port to listen on; 0 picks a free one (default 0)
          --android-name NAME  platform name the upsert accepts for Android: fcmv1
                               (default, as notifyd's own default expects): the
                               tutorial updated for FCM v1, which knows wns, apns
                               and fcmv1 only (registrations under other names get
                               400 "Unsupported platform", sends 500); fcm: the
                               tutorial as first written; gcm (older), or both
          --gone-status CODE   answer to an upsert of an unknown or expired id:
                               500 (default, what the tutorial does), 410 or 404
          --escapes-text       model a fixed backend that escapes the message text
          --accounts FILE      users with a password of their own, one USER:PASSWORD
                               per line (anyone else logs in with their user name as
                               the password, the tutorial's rule); a file, so that no
                               password is on a command line
          --api DIALECT        registrations (default): the tutorial's routes and Basic
                               authentication; installations: the backend service's
                               routes, PUT and DELETE /api/notifications/installations
                               and POST /api/notifications/requests, behind an API key.
                               The other dialect's routes answer 404
          --api-key KEY        the key installations requests must carry (header or
                               query "apikey"); never printed
          --api-key-file FILE  the key from the first line of FILE, so that no key is
                               on a command line
          --installations-android-name NAME
                               the Android platform name installations accept: fcmv1
                               (default) or fcm (the sample's docs before FCM v1)
          --quiet              print only the first line
          --help               show this help
          --version            show the version

        The first line on standard output is "notify-devbackend listening on
        http://HOST:PORT". Inspection and fault injection: GET /_dev/state,
        POST /_dev/reset, GET|POST|DELETE /_dev/faults, POST /_dev/expire/{id}.
        """

    /// Parses the arguments after the program name. Accepts `--flag value` and `--flag=value`.
    public static func parseArguments(_ arguments: [String]) throws(UsageError) -> Command {
        // Android as notifyd names it by default: the tutorial as updated for FCM v1, the
        // only way Notification Hubs reaches Android since June 2024.
        var options = Options(androidPlatformName: .fcmv1, logRequests: true)
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
            case "--api":
                let text = try value()
                guard let api = API(rawValue: text) else {
                    throw UsageError(message: "--api must be registrations or installations, not '\(text)'")
                }
                options.api = api
            case "--api-key":
                // The key itself is never repeated in a message.
                options.apiKey = try apiKey(try value(), from: "--api-key")
            case "--api-key-file":
                options.apiKey = try apiKey(inFile: try value())
            case "--installations-android-name":
                let text = try value()
                guard let name = InstallationsAndroidName(rawValue: text) else {
                    throw UsageError(message: "--installations-android-name must be fcmv1 or fcm, not '\(text)'")
                }
                options.installationsAndroidName = name
            default:
                // The flag alone: a mistyped `--api-key=KEY` must not print the key.
                throw UsageError(message: "unknown argument '\(flag)'")
            }
        }
        if options.api == .installations && options.apiKey == nil {
            throw UsageError(message: "--api installations needs a key: give --api-key KEY or --api-key-file FILE")
        }
        return .run(options)
    }

    /// A key the backend service could ever accept: it refuses one of white space alone.
    private static func apiKey(_ key: String, from source: String) throws(UsageError) -> String {
        if key.allSatisfy(\.isWhitespace) {
            throw UsageError(message: "\(source): the API key is empty")
        }
        return key
    }

    /// The first line of the file, without its line ending.
    private static func apiKey(inFile path: String) throws(UsageError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw UsageError(message: "--api-key-file: cannot read '\(path)'")
        }
        // Any line ending ends the key: "\r\n" is a single Character, so "\n" would not split it.
        let line = text.split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? ""
        return try apiKey(String(line), from: "--api-key-file \(path)")
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
