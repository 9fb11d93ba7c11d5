/// How many times one bridge has been misused in one way, counted after the first report.
///
/// Shared by the ``BridgeDiagnostic`` delivered for the first occurrence and the ledger, which
/// bumps it for every later occurrence; ``BridgeDiagnostic/occurrences`` reads it live.
@usableFromInline
package final class MisuseOccurrences: @unchecked Sendable {  // `count` is only touched under MisuseLedger's lock
    fileprivate var count = 1
    fileprivate init() {}

    /// The number of occurrences so far (at least 1).
    package var value: Int { MisuseLedger.table.withLock { _ in count } }
}

/// The process-wide record of which bridge has reported which kind of misuse.
///
/// The first occurrence of a kind on a bridge is delivered to the diagnostics handler; later
/// ones only bump the shared counter, so a flood costs one line. Keyed by the bridge's
/// `ObjectIdentifier` and kind, with a `weak` reference to the bridge: a new bridge at a reused
/// address finds the old entry's reference gone and is reported afresh. Entries of dead bridges
/// are swept when the table has doubled since the last sweep, so each report costs amortised
/// O(1) and the table stays within twice the live entries (plus a small floor).
///
/// A bridge that reports from its own `deinit` must not come here (forming a weak reference to
/// an object in its deinit traps): those reports are inherently once and pass no identity.
package enum MisuseLedger {
    struct Key: Hashable {
        let bridge: ObjectIdentifier
        let kind: BridgeDiagnostic.Kind
    }

    struct Entry {
        weak var bridge: AnyObject?
        let occurrences: MisuseOccurrences
    }

    struct Table {
        var entries: [Key: Entry] = [:]
        /// Sweep dead entries when the table reaches this size.
        var sweepAt = 64
    }

    static let table = LockedState<Table>(Table())

    /// Records one occurrence of `kind` on `bridge`. Returns the shared counter when this is
    /// the first occurrence (the caller delivers the report), nil when it was only counted.
    package static func record(_ kind: BridgeDiagnostic.Kind, on bridge: AnyObject) -> MisuseOccurrences? {
        let key = Key(bridge: ObjectIdentifier(bridge), kind: kind)
        let (first, dead) = table.withLock { table -> (MisuseOccurrences?, [Entry]) in
            if let entry = table.entries[key], entry.bridge === bridge {
                entry.occurrences.count += 1
                return (nil, [])
            }
            var dead: [Entry] = []
            if table.entries.count >= table.sweepAt {
                table.entries = table.entries.filter { element in
                    if element.value.bridge != nil { return true }
                    dead.append(element.value)
                    return false
                }
                table.sweepAt = Swift.max(64, 2 * table.entries.count)
            }
            let occurrences = MisuseOccurrences()
            table.entries[key] = Entry(bridge: bridge, occurrences: occurrences)
            return (occurrences, dead)
        }
        withExtendedLifetime(dead) {}  // released after the lock
        return first
    }

    /// Entries in the table (dead ones included until the next sweep), for tests.
    package static var entryCount: Int { table.withLock { $0.entries.count } }
}
