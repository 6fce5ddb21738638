//! A process that exits with a file under the layer still open ends: [`detach_all`] aborts the
//! layer's connection first. Without it, the kernel's `FLUSH` of that file at exit waits for
//! the thread that would answer it — a thread of the process that is exiting — and the process
//! never ends (whenever the file's descriptor is closed before the FUSE device's, as here: it
//! is moved to descriptor 0). Its own test binary, which runs itself as the child; where FUSE
//! cannot be mounted it fails, saying why, unless `SEAM_SKIP_FUSE=1` asks to skip it knowingly.
//!
//! [`detach_all`]: seam_powercut::detach_all

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child: the directory it mounts in.
const CHILD: &str = "SEAM_POWERCUT_EXIT_CHILD";

/// The child: mounts the layer, opens a file under it as descriptor 0, cuts the power, detaches
/// everything and exits without closing the file.
fn child(dir: &std::path::Path) -> ! {
    let (backing, mnt) = (dir.join("backing"), dir.join("mnt"));
    std::fs::create_dir(&backing).expect("backing");
    std::fs::create_dir(&mnt).expect("mount point");
    let mounted = seam_powercut::mount(&backing, &mnt).expect("mount the layer");
    let mut file = std::fs::File::create(mnt.join("open")).expect("a file under the layer");
    file.write_all(b"written, never closed").expect("written");
    rustix::stdio::dup2_stdin(&file).expect("the file as descriptor 0");
    // Kept open (and mounted) through the exit, as an interrupted run leaves them.
    std::mem::forget(file);
    std::mem::forget(mounted);
    assert_eq!(
        seam_powercut::detach_all(),
        1,
        "the layer mounted is listed"
    );
    std::process::exit(0);
}

#[test]
fn a_process_that_exits_with_a_file_open_under_the_layer_ends() {
    if let Some(dir) = std::env::var_os(CHILD) {
        child(std::path::Path::new(&dir));
    }
    if let Err(why) = seam_powercut::available() {
        assert!(
            std::env::var_os("SEAM_SKIP_FUSE").is_some(),
            "FUSE cannot be mounted here ({why}); set SEAM_SKIP_FUSE=1 to skip knowingly"
        );
        eprintln!("skipped (SEAM_SKIP_FUSE): {why}");
        return;
    }
    let dir = tempfile::tempdir().expect("a directory");
    let mut child = Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "--exact",
            "a_process_that_exits_with_a_file_open_under_the_layer_ends",
        ])
        .env(CHILD, dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("the child starts");
    // Not a measure of speed: a child that hangs never ends; one that ends does so at once.
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the child has not ended 60 s after exiting with a file open under the layer"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let here = dir.path().display().to_string();
    assert!(
        !mounts.lines().any(|l| l.contains(&here)),
        "the layer is still mounted:\n{mounts}"
    );
    // What the child wrote reached the backing directory (the layer passed it through).
    assert_eq!(
        std::fs::read(dir.path().join("backing/open")).expect("the file"),
        b"written, never closed"
    );
}
