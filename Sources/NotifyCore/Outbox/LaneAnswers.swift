import Synchronization

/// The backend's answers to lane requests, from the HTTP thread to the outbox: a task is
/// started only when the list goes from empty to not, so answers that arrive while the
/// outbox is busy are taken together.
final class LaneAnswers: Sendable {
    struct Answer: Sendable {
        var id: String
        var key: String
        var result: Result<Void, BackendCallError>
        var account: BackendAccount
    }

    private let answers = Mutex<[Answer]>([])

    /// True when the list was empty: the caller starts the task that takes them.
    func post(_ answer: Answer) -> Bool {
        answers.withLock { answers in
            answers.append(answer)
            return answers.count == 1
        }
    }

    func take() -> [Answer] {
        answers.withLock { answers in
            defer { answers = [] }
            return answers
        }
    }
}
