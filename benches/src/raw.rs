//! The raw baselines: what the same operation costs with no seam at all.

use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
use seam_local::Durability;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

/// Bytes per chunk of the raw streamed read (the same as the provider's).
pub const CHUNK: usize = 64 * 1024;

/// `std::fs::read_to_string`.
pub fn read_to_string(path: &Path) -> usize {
    std::fs::read_to_string(path).map(|s| s.len()).unwrap_or(0)
}

/// Reads in 64 KiB chunks into one reused buffer, validating UTF-8 incrementally (a split
/// sequence is carried to the next chunk). Returns the number of valid bytes.
pub fn stream_validated(path: &Path) -> usize {
    let Ok(mut f) = File::open(path) else {
        return 0;
    };
    let mut buf = vec![0u8; CHUNK + 4];
    let mut carry = 0;
    let mut total = 0;
    loop {
        let n = match f.read(&mut buf[carry..carry + CHUNK]) {
            Ok(n) => n,
            Err(_) => return 0,
        };
        let end = carry + n;
        match std::str::from_utf8(&buf[..end]) {
            Ok(s) => {
                total += s.len();
                carry = 0;
            }
            Err(e) if e.error_len().is_none() && n > 0 => {
                let valid = e.valid_up_to();
                total += valid;
                buf.copy_within(valid..end, 0);
                carry = end - valid;
            }
            Err(_) => return 0,
        }
        if n == 0 {
            return total;
        }
    }
}

/// `statx` by path, turned into the same five facts a version token uses.
pub fn statx(path: &Path) -> u64 {
    match rustix::fs::statx(
        rustix::fs::CWD,
        path,
        AtFlags::empty(),
        StatxFlags::BASIC_STATS,
    ) {
        Ok(st) => {
            st.stx_ino ^ st.stx_size ^ st.stx_mtime.tv_nsec as u64 ^ st.stx_ctime.tv_nsec as u64
        }
        Err(_) => 0,
    }
}

/// `read_dir` of a directory with a `statx` per entry, names sorted.
pub fn read_dir_statx(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut names: Vec<(std::ffi::OsString, u64)> = entries
        .flatten()
        .map(|e| {
            let meta = statx(&e.path());
            (e.file_name(), meta)
        })
        .collect();
    names.sort();
    names.len()
}

/// The raw atomic replace with a durability: an exclusive 0600 temp file next to the target,
/// write, fsync (unless `None`), rename, fsync the directory (if `Full`).
pub fn atomic_write(
    dir: &Path,
    dir_fd: &File,
    name: &str,
    content: &[u8],
    durability: Durability,
    n: u64,
) {
    let tmp = format!(".raw-{n}.tmp");
    let fd = match rustix::fs::openat(
        dir_fd,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    ) {
        Ok(fd) => fd,
        Err(e) => panic!("raw temp in {}: {e}", dir.display()),
    };
    let mut f = File::from(fd);
    if let Err(e) = f.write_all(content) {
        panic!("raw write: {e}");
    }
    if durability != Durability::None {
        let _ = f.sync_all();
    }
    drop(f);
    if let Err(e) = rustix::fs::renameat(dir_fd, tmp.as_str(), dir_fd, name) {
        panic!("raw rename: {e}");
    }
    if durability == Durability::Full {
        let _ = dir_fd.sync_all();
    }
}

/// The raw edit: read the file, replace one literal, publish as [`atomic_write`].
pub fn edit(
    dir: &Path,
    dir_fd: &File,
    name: &str,
    old: &str,
    new: &str,
    durability: Durability,
    n: u64,
) {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let edited = text.replacen(old, new, 1);
    atomic_write(dir, dir_fd, name, edited.as_bytes(), durability, n);
}

/// Opens a directory for `*at` calls and fsync.
pub fn open_dir(dir: &Path) -> File {
    match File::open(dir) {
        Ok(f) => f,
        Err(e) => panic!("open {}: {e}", dir.display()),
    }
}

/// A bare request/answer over a Unix socket: one JSON line out, one JSON line back, a blocking
/// thread at each end and nothing else. The floor of any round trip on this machine; the
/// remote bench pays it with lines the size of a `stat`'s.
pub struct LineRoundTrip {
    client: std::io::BufReader<std::os::unix::net::UnixStream>,
    request: Vec<u8>,
    answer: String,
    _server: std::thread::JoinHandle<()>,
}

impl LineRoundTrip {
    /// A server thread on a socket at `path` that answers every line it reads with `answer`
    /// (a `\n` is added to both).
    pub fn start(path: &Path, request: &str, answer: &str) -> Self {
        use std::io::BufRead;
        let listener = match std::os::unix::net::UnixListener::bind(path) {
            Ok(l) => l,
            Err(e) => panic!("bind {}: {e}", path.display()),
        };
        let mut reply = answer.as_bytes().to_vec();
        reply.push(b'\n');
        let server = std::thread::spawn(move || {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let Ok(mut write) = stream.try_clone() else {
                return;
            };
            let mut read = std::io::BufReader::new(stream);
            let mut line = String::new();
            loop {
                line.clear();
                match read.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if write.write_all(&reply).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let client = match std::os::unix::net::UnixStream::connect(path) {
            Ok(c) => c,
            Err(e) => panic!("connect {}: {e}", path.display()),
        };
        let mut request = request.as_bytes().to_vec();
        request.push(b'\n');
        Self {
            client: std::io::BufReader::new(client),
            request,
            answer: String::new(),
            _server: server,
        }
    }

    /// One round trip; the answer's length.
    pub fn round_trip(&mut self) -> usize {
        use std::io::BufRead;
        if let Err(e) = self.client.get_mut().write_all(&self.request) {
            panic!("send: {e}");
        }
        self.answer.clear();
        match self.client.read_line(&mut self.answer) {
            Ok(n) => n,
            Err(e) => panic!("answer: {e}"),
        }
    }
}
