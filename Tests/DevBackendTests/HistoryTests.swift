import Testing

@testable import DevBackend

@Suite struct HistoryTests {
    private func history(limit: Int, appending items: Range<Int>) -> History<Int> {
        var history = History<Int>(limit: limit)
        for item in items { history.append(item) }
        return history
    }

    @Test func belowItsLimitItKeepsEverythingInOrder() {
        #expect(history(limit: 3, appending: 0..<2).elements == [0, 1])
        #expect(history(limit: 3, appending: 0..<3).elements == [0, 1, 2])
    }

    @Test func pastItsLimitItDropsTheOldestAndKeepsTheOrder() {
        #expect(history(limit: 3, appending: 0..<4).elements == [1, 2, 3])
        #expect(history(limit: 3, appending: 0..<5).elements == [2, 3, 4])
        #expect(history(limit: 3, appending: 0..<6).elements == [3, 4, 5])
        #expect(history(limit: 3, appending: 0..<8).elements == [5, 6, 7])
        #expect(history(limit: 3, appending: 0..<8).count == 3)
    }

    @Test func aLimitOfOneKeepsTheLast() {
        #expect(history(limit: 1, appending: 0..<5).elements == [4])
    }

    @Test func emptiedItFillsAgainFromTheStart() {
        var history = history(limit: 3, appending: 0..<5)
        history.removeAll()
        #expect(history.elements.isEmpty)
        history.append(9)
        history.append(10)
        #expect(history.elements == [9, 10])
    }
}
