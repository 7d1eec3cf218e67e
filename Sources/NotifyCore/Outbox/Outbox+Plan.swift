#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// What one `send` becomes at the backend in force: a delivery per platform at the
/// tutorial's AppBackend, one notification request (to every platform) at the backend service.
extension Outbox {
    /// What a send asks for besides a recipient and its text.
    public struct SendOptions: Sendable, Equatable {
        /// Raw tags (`send --tag`): installations only.
        public var tags: [String]
        /// Installations only; `SendCommand.defaultAction` when nil.
        public var action: String?
        public var silent: Bool
        /// The request named its platforms, which the backend service cannot honour.
        public var platformsNamed: Bool

        public init(tags: [String] = [], action: String? = nil, silent: Bool = false, platformsNamed: Bool = false) {
            self.tags = tags
            self.action = action
            self.silent = silent
            self.platformsNamed = platformsNamed
        }

        var asksForRequest: Bool { !tags.isEmpty || action != nil || silent }
    }

    struct SendPlan {
        /// What listings show as the recipient: the user, or the tags.
        var to: String
        var copies: [(platform: Platform?, request: Delivery.RequestFields?)]
    }

    /// The copies of a message from `account` to `to` (empty when only tags name the
    /// recipients), checked as far as they can be before anything is sent or kept.
    func plan(to: String, message: String, platforms: [Platform], options: SendOptions, account: AccountKey) throws(CoreError) -> SendPlan {
        switch account.api {
        case .registrations:
            if options.asksForRequest {
                throw .invalidArgument("--tag, --action and --silent are for a backend with backend_api = installations; "
                                       + "the tutorial's AppBackend sends to one user (--to) on the platforms --pns names")
            }
            guard !to.isEmpty else { throw .invalidArgument("no recipient: name a user with --to") }
            guard !message.isEmpty else { throw .invalidArgument("the message is empty") }
            let platforms = distinctAtTheBackend(platforms)
            try checkSize(message, sender: account.user, platforms: platforms)
            return SendPlan(to: to, copies: platforms.map { ($0, nil) })
        case .installations:
            if options.platformsNamed {
                throw .invalidArgument("an installations backend sends every request to all platforms (apns and fcmv1); leave out --pns")
            }
            let tags = try RegistrationTags.validate((to.isEmpty ? [] : [InstallationRoutes.userTag(to)]) + options.tags, forSending: true)
            guard !tags.isEmpty else { throw .invalidArgument("no recipient: name a user with --to, or tags with --tag") }
            let action = options.action ?? SendCommand.defaultAction
            // The sample answers 422 to an empty action, and to an empty text unless silent.
            guard !action.isEmpty else { throw .invalidArgument("the action is empty; leave out --action for the default, \(SendCommand.defaultAction)") }
            guard options.silent || !message.isEmpty else { throw .invalidArgument("the message is empty (only a --silent notification may have none)") }
            try NotificationRequestText.checkSize(text: message, action: action, silent: options.silent)
            let shown = to.isEmpty ? options.tags.joined(separator: " || ") : ([to] + options.tags).joined(separator: " || ")
            return SendPlan(to: shown, copies: [(nil, Delivery.RequestFields(tags: tags, action: action, silent: options.silent))])
        }
    }
}
