#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// What the deliveries to one recipient, on one platform, queued by one account share:
/// kept once for all of them by the parts of the queue that keep entries in place of
/// deliveries (`DeferredDeliveries`, `DeadDeliveries`).
struct DeliveryKey {
    var to: String
    /// Nil for a notification request, whose tags and action are read with its text.
    var platform: Platform?
    var account: AccountKey?
    var orderKey: String

    init(of delivery: Delivery) {
        to = delivery.to
        platform = delivery.platform
        account = delivery.account
        orderKey = delivery.orderKey
    }

    /// A delivery of this key, without its message (its record on disk keeps it).
    func delivery(sequence: Int, createdAt: Date, expiresAt: Date) -> Delivery {
        var delivery = Delivery(sequence: sequence, to: to, platform: platform, message: "", createdAt: createdAt, expiresAt: expiresAt,
                                account: account)
        delivery.shareOrderKey(orderKey)
        return delivery
    }
}
