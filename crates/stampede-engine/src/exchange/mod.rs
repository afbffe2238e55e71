//! The I/O-free books of one HTTP/1.1 exchange, kept alike by the tokio
//! slot (drive/connection.rs) and the reactors' `Ledger`
//! (drive/reactor/ledger.rs): a request's clocks, outcome and retry, a
//! connection's reuse and life, and the read buffer the parser consumes.

pub(crate) mod conn_books;
pub(crate) mod read_buffer;
pub(crate) mod request_books;
