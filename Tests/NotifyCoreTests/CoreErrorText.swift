@testable import NotifyCore

/// The message of an `invalidArgument` error, or nil for anything else.
func invalidArgumentText(_ error: CoreError?) -> String? {
    if case .invalidArgument(let message)? = error { return message }
    return nil
}
