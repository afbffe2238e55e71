//! Which connection a slot uses when a request goes to another origin
//! (a redirect hop, redirect.rs): the rule both the tokio `Slot`
//! (connection.rs) and the reactors' `ReactorSlot` (reactor/slot.rs) follow,
//! written once here so that they cannot drift apart.
//!
//! A slot holds at most two connections: its own (origin `None`, the run's)
//! and one to the last other origin it went to, kept alive for the next hop
//! there. The one not in use is parked aside. Going to a third origin closes
//! the other foreign one: a foreign connection is never parked behind another,
//! and the run's own connection is parked, never lost.

/// What a slot does to make its current connection the one to the origin a
/// request wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OriginSwitch {
    /// The current connection already goes there.
    Stay,
    /// The parked connection goes there: swap it in.
    SwapSide,
    /// Park the current connection, closing what was parked (another
    /// origin's), and take the freed place for the wanted origin.
    ParkCurrent,
    /// Close the current connection (a foreign one) and take its place for
    /// the wanted origin.
    DropCurrent,
}

/// The move that makes `current` (the origin of the slot's connection in
/// use) into `want`, given the origin of the parked connection (`side`:
/// `None` when nothing was ever parked). Origins are `None` for the run's
/// own, else an id in the worker's `OriginBook`.
pub(crate) fn origin_switch(
    current: Option<u16>,
    side: Option<Option<u16>>,
    want: Option<u16>,
) -> OriginSwitch {
    if current == want {
        OriginSwitch::Stay
    } else if side == Some(want) {
        OriginSwitch::SwapSide
    } else if current.is_none() || want.is_none() {
        OriginSwitch::ParkCurrent
    } else {
        OriginSwitch::DropCurrent
    }
}

#[cfg(test)]
mod tests {
    use super::{origin_switch, OriginSwitch::*};

    #[test]
    fn every_case_of_the_rule() {
        let cases = [
            // (current, side, want, move)
            (None, None, None, Stay),
            (Some(1), Some(None), Some(1), Stay),
            // First hop away: the run's connection is parked.
            (None, None, Some(1), ParkCurrent),
            // Back home: the run's connection is in the side.
            (Some(1), Some(None), None, SwapSide),
            // Out again to the same origin: its connection is in the side.
            (None, Some(Some(1)), Some(1), SwapSide),
            // Out to a second foreign origin from home: the first is closed.
            (None, Some(Some(1)), Some(2), ParkCurrent),
            // From one foreign origin to another: the current one is closed,
            // the run's connection stays parked.
            (Some(1), Some(None), Some(2), DropCurrent),
        ];
        for (current, side, want, expected) in cases {
            assert_eq!(
                origin_switch(current, side, want),
                expected,
                "current {current:?}, side {side:?}, want {want:?}"
            );
        }
    }
}
