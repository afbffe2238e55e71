//! What a reactor slot holds, whatever drives its socket: where it is in
//! its request ([`Phase`]), its connection and books ([`SlotBase`]), and the
//! connection it keeps parked after a redirect to another origin
//! ([`SideLink`]; the switching rule is redirect_switch.rs, followed by
//! `ReactorSlot::switch_to`).

use crate::exchange::ledger::{Ledger, LinkBooks};
use crate::net::outcome_class::Stage;
use crate::worker::context::ConnectionContext;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

/// Where a slot is in its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No request: not started yet, parked by the schedule, or out of budget.
    Idle,
    /// A new connection's handshake is under way (the request waits).
    Connecting,
    /// The TCP connect is done; the TLS handshake is under way.
    Handshaking,
    /// The request is partly written; the rest waits for room.
    Writing,
    /// The request is out; the response is awaited.
    Reading,
}

impl Phase {
    /// The stage of its request (outcome_class.rs: what a timeout in it
    /// is counted as).
    pub(crate) fn stage(self) -> Stage {
        match self {
            Phase::Connecting => Stage::Connect,
            Phase::Handshaking => Stage::Handshake,
            Phase::Idle | Phase::Writing | Phase::Reading => Stage::Exchange,
        }
    }

    /// The connection is not open yet (its request has not started).
    pub(crate) fn is_opening(self) -> bool {
        matches!(self, Phase::Connecting | Phase::Handshaking)
    }
}

/// What every reactor slot holds.
#[derive(Debug)]
pub(crate) struct SlotBase {
    pub index: u32,
    /// Bumped whenever the connection changes, so that an event or a
    /// completion of a closed connection never reaches its successor.
    pub generation: u32,
    pub fd: Option<OwnedFd>,
    pub phase: Phase,
    pub ledger: Ledger,
    /// The origin of the current connection (`None`: the run's own).
    pub origin: Option<u16>,
    /// The slot's parked connection (after a redirect to another origin).
    pub side: Option<Box<SideLink>>,
}

/// A connection parked aside by [`ReactorSlot::switch_to`], with its books.
#[derive(Debug)]
pub(crate) struct SideLink {
    pub origin: Option<u16>,
    pub fd: Option<OwnedFd>,
    pub generation: u32,
    /// An event or completion came for it while it was parked.
    pub stale: bool,
    books: LinkBooks,
}

impl SideLink {
    fn new(now: Instant) -> SideLink {
        SideLink {
            origin: None,
            fd: None,
            generation: 0,
            stale: false,
            books: LinkBooks::new(now),
        }
    }
}

impl SlotBase {
    pub(crate) fn new(index: u32, head_request: bool, now: Instant) -> SlotBase {
        SlotBase {
            index,
            generation: 0,
            fd: None,
            phase: Phase::Idle,
            ledger: Ledger::new(head_request, now, index),
            origin: None,
            side: None,
        }
    }

    /// Swaps the current connection's fd, generation, origin and books with
    /// the parked one's (the reactor's own parts are its to swap).
    pub(crate) fn swap_side_link(&mut self) {
        let side = self
            .side
            .get_or_insert_with(|| Box::new(SideLink::new(Instant::now())));
        std::mem::swap(&mut self.fd, &mut side.fd);
        std::mem::swap(&mut self.generation, &mut side.generation);
        std::mem::swap(&mut self.origin, &mut side.origin);
        self.ledger.swap_link(&mut side.books);
    }

    /// A generation for a new connection, never the parked one's (an
    /// event of either must not reach the other).
    pub(crate) fn bump_generation(&mut self) {
        let parked = self.side.as_ref().map_or(0, |s| s.generation);
        self.generation = self.generation.max(parked).wrapping_add(1);
    }

    /// An event or completion of generation `generation`, not the current
    /// connection's: if it is the parked connection's, that one is stale.
    pub(crate) fn note_parked_event(&mut self, generation: u32, mask: u32) {
        if let Some(side) = self.side.as_mut() {
            if side.fd.is_some() && side.generation & mask == generation {
                side.stale = true;
            }
        }
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// Starts a new connection: its books, then a socket from `make`, under
    /// a new generation.
    pub(crate) fn new_socket(
        &mut self,
        ctx: &ConnectionContext,
        now: Instant,
        make: impl FnOnce(&ConnectionContext) -> io::Result<OwnedFd>,
    ) -> io::Result<OwnedFd> {
        self.ledger.connecting(ctx, now);
        let fd = make(ctx)?;
        self.bump_generation();
        Ok(fd)
    }
}
