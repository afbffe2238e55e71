//! The Unix domain socket listener: binding it (a stale socket file left by a dead
//! server is removed first; a live server's socket or a file that is not a socket is
//! an error, never deleted), and removing it at shutdown only if it is still ours.
//! One socket serves all workers: each registers its own dup of the fd (see
//! `worker::accept_unix` for why this rather than one accepting thread).

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use socket2::{Domain, SockAddr, Socket, Type};

use crate::TargetError;

/// A bound Unix socket and the identity of its file.
pub(crate) struct UnixSocket {
    pub path: PathBuf,
    pub listener: UnixListener,
    /// (device, inode) of the socket file we created.
    id: (u64, u64),
}

/// The socket file as this server created it, to remove at shutdown.
#[derive(Debug)]
pub(crate) struct SocketFile {
    path: PathBuf,
    id: (u64, u64),
}

impl UnixSocket {
    /// Binds `path`, removing a stale socket file first. `backlog` is the
    /// server's (`Config::backlog`; std's default would be 128).
    pub(crate) fn bind(path: &Path, backlog: i32) -> Result<UnixSocket, TargetError> {
        let err = |source| TargetError::Unix {
            path: path.to_path_buf(),
            source,
        };
        remove_stale(path).map_err(err)?;
        let s = Socket::new(Domain::UNIX, Type::STREAM, None).map_err(err)?;
        s.bind(&SockAddr::unix(path).map_err(err)?).map_err(err)?;
        s.listen(backlog).map_err(err)?;
        s.set_nonblocking(true).map_err(err)?;
        let meta = std::fs::symlink_metadata(path).map_err(err)?;
        Ok(UnixSocket {
            path: path.to_path_buf(),
            listener: s.into(),
            id: (meta.dev(), meta.ino()),
        })
    }

    pub(crate) fn file(&self) -> SocketFile {
        SocketFile {
            path: self.path.clone(),
            id: self.id,
        }
    }
}

impl SocketFile {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the socket file if it is still the one we bound (not a successor's).
    pub(crate) fn remove(&self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.id {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// A socket file nobody listens on is stale: remove it. Anything else stays.
fn remove_stale(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "exists and is not a socket (not removed)",
        ));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            "another server is listening on it",
        )),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => std::fs::remove_file(path),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_live_and_foreign_files() {
        let dir = std::env::temp_dir().join(format!("stampede-unix-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.sock");
        // A stale socket (its listener closed) is replaced.
        drop(UnixListener::bind(&p).unwrap());
        let live = UnixSocket::bind(&p, 16).unwrap();
        // A live one is not.
        let e = UnixSocket::bind(&p, 16).err().unwrap().to_string();
        assert!(e.contains("another server"), "{e}");
        let file = live.file();
        drop(live);
        file.remove();
        assert!(!p.exists());
        // A regular file is never removed.
        std::fs::write(&p, b"x").unwrap();
        let e = UnixSocket::bind(&p, 16).err().unwrap().to_string();
        assert!(e.contains("not a socket"), "{e}");
        assert!(p.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
