//! The I/O-free books of one HTTP/1.1 exchange, kept alike by the tokio
//! slot (drive/connection.rs) and the reactors' `Ledger` (ledger.rs, a
//! slot's books as the epoll and io_uring loops drive it): a request's
//! clocks, outcome and retry, a connection's reuse and life, the read
//! buffer the parser consumes, and the reading of a response from the bytes
//! a driver hands in. Nothing here does I/O or imports a loop. ws_session.rs
//! is a WebSocket connection's client side, as I/O-free; h2_exchange.rs a
//! reactor slot's HTTP/2 connection and streams (the stampede-h2 codec),
//! booked with the same clocks and rules.

pub(crate) mod conn_books;
pub(crate) mod h2_exchange;
#[cfg(test)]
mod h2_exchange_tests;
pub(crate) mod ledger;
#[cfg(test)]
mod ledger_tests;
pub(crate) mod read_buffer;
pub(crate) mod request_books;
pub(crate) mod response_reader;
pub(crate) mod ws_session;
