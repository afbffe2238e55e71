//! The event loops, only I/O and waiting: worker.rs runs a worker thread on
//! tokio or hands it to a reactor (reactor/, epoll and io_uring). On tokio,
//! connection.rs is the HTTP/1.1 slot, closed.rs and open.rs the two load
//! models, h2/ and h3/ the other protocols, ws_slot.rs and ws_load.rs WebSocket (ws_conn.rs its
//! booking, the epoll reactor's too). What every loop reads
//! (`ConnectionContext`) and the booking of a request's end are worker/'s.

pub(crate) mod closed;
pub(crate) mod connection;
pub(crate) mod h2;
pub(crate) mod h3;
pub(crate) mod open;
pub(crate) mod precise_timer;
pub(crate) mod reactor;
pub(crate) mod worker;
pub(crate) mod ws_conn;
pub(crate) mod ws_load;
pub(crate) mod ws_slot;
