//! File descriptors skillet inherited from whatever started it (an IDE, a wrapper, a shell's
//! `exec 7<>socket`) are open in skillet without close-on-exec, so every program skillet starts
//! would get them too, the sandbox's commands included: an open socket to a server outside is a
//! door no mount closes. [`close_on_exec_inherited`] marks them all close-on-exec once, first
//! thing, so nothing skillet did not open itself reaches a child; std and skillet open their own
//! descriptors close-on-exec already.

use std::os::fd::BorrowedFd;

use rustix::io::{FdFlags, fcntl_getfd, fcntl_setfd};

/// The first descriptor marked: 0, 1 and 2 are stdio, which children are meant to get.
const FIRST_MARKED: i32 = 3;

/// Marks every open descriptor from 3 up close-on-exec. Call it while the process has one
/// thread (first thing in `main`, or in the sandbox's inner layer before it runs the command).
/// Returns how many were marked, or the error that stopped the listing.
pub fn close_on_exec_inherited() -> std::io::Result<usize> {
    // The listing stays open while the descriptors are marked, so every number listed is open
    // until the end (its own is close-on-exec already and left alone).
    let mut listing = std::fs::read_dir("/proc/self/fd")?;
    let open: Vec<i32> = listing
        .by_ref()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd >= FIRST_MARKED)
        .collect();
    let mut marked = 0;
    for raw in open {
        // SAFETY: every number listed is open: the process has one thread (the caller's
        // promise), nothing here closes one, and the listing's own descriptor lives until the
        // end of this function. The borrow ends within the iteration.
        #[allow(unsafe_code)]
        let fd = unsafe { BorrowedFd::borrow_raw(raw) };
        let flags = fcntl_getfd(fd)?;
        if !flags.contains(FdFlags::CLOEXEC) {
            fcntl_setfd(fd, flags | FdFlags::CLOEXEC)?;
            marked += 1;
        }
    }
    drop(listing);
    Ok(marked)
}
