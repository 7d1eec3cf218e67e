import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// What a refused registration teaches the machine about its backend, and what it keeps.
struct RefusedPlatformTests {
    typealias Machine = RegistrationMachineTests

    static func inputs(_ platform: Platform, backend: String = Machine.backend) -> RegistrationInputs {
        var inputs = Machine.complete(backend: backend)
        inputs.platform = platform
        return inputs
    }

    /// A machine whose registration of `inputs` ended with `result` at the upsert.
    static func upserted(_ inputs: RegistrationInputs, _ result: StepResult, record: RegistrationRecord = RegistrationRecord()) -> RegistrationMachine {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: record, policy: Machine.policy)
        _ = machine.update(inputs, now: Machine.start)
        _ = machine.stepFinished(.created(id: "id-1"), now: Machine.start)
        _ = machine.stepFinished(result, now: Machine.start)
        return machine
    }

    @Test(arguments: Platform.androidNames)
    func a400ToAnAndroidNameIsKeptAsProofTheBackendDoesNotKnowIt(name: Platform) {
        let machine = Self.upserted(Self.inputs(name), .failed(.rejected(status: 400, detail: "Unsupported platform")))
        #expect(machine.record.refusedPlatforms == [RefusedPlatform(backend: Machine.backend, platform: name, detail: "Unsupported platform")])
        #expect(machine.status.state == .rejected)
        #expect(machine.status.message?.contains("'\(name)'") == true)
        #expect(machine.status.message?.contains("android_name") == true)
    }

    /// Every tutorial knows apns and wns: their 400 is a bad registration, not a name.
    @Test(arguments: [Platform.apns, .wns])
    func a400ToApnsOrWnsProvesNothing(name: Platform) {
        let machine = Self.upserted(Self.inputs(name), .failed(.rejected(status: 400, detail: "")))
        #expect(machine.record.refusedPlatforms.isEmpty)
        #expect(machine.status.message?.contains("check the token, platform and tags") == true)
    }

    /// Other refusals prove nothing about the name: a 415, a 409.
    @Test(arguments: [409, 415, 422])
    func anotherRefusalProvesNothing(status: Int) {
        let machine = Self.upserted(Self.inputs(.fcmv1), .failed(.rejected(status: status, detail: "")))
        #expect(machine.record.refusedPlatforms.isEmpty)
    }

    /// The backend was updated meanwhile: a registration it takes under the name forgets
    /// the refusal at that backend, and only there.
    @Test func anAcceptedRegistrationForgetsTheRefusalAtItsBackend() {
        var record = RegistrationRecord()
        record.learn(.fcmv1, at: Machine.backend, refused: "")
        record.learn(.fcmv1, at: "https://other.example", refused: "")
        let machine = Self.upserted(Self.inputs(.fcmv1), .done, record: record)
        #expect(machine.record.refusedPlatforms.map(\.backend) == ["https://other.example"])
        #expect(machine.record.refusal(of: .fcmv1, at: Machine.backend) == nil)
    }

    @Test func theOldestGoesBeyondSixteen() {
        var record = RegistrationRecord()
        for index in 0..<20 { record.learn(.fcm, at: "https://b\(index).example", refused: "") }
        #expect(record.refusedPlatforms.count == 16)
        #expect(record.refusedPlatforms.first?.backend == "https://b4.example")
        #expect(record.refusal(of: .fcm, at: "https://b19.example") != nil)
    }

    /// The user chose a legacy name; the registration works, and status says nothing gets there.
    @Test(arguments: [Platform.fcm, .gcm])
    func aRegistrationUnderALegacyNameIsRegisteredWithAWarning(name: Platform) {
        let machine = Self.upserted(Self.inputs(name), .done)
        #expect(machine.status.state == .registered)
        #expect(machine.status.message?.contains("legacy name '\(name)'") == true)
        #expect(Self.upserted(Self.inputs(.fcmv1), .done).status.message == nil)
    }
}
