//! Keeps the graphics stack's own stderr lines out of the user's terminal.
//!
//! Opening a GPU through wgpu loads the system's Vulkan loader, its implicit layers and
//! the driver, and some of them write straight to file descriptor 2: Mesa's device
//! selection layer prints «error: XDG_RUNTIME_DIR is invalid or not set in the
//! environment.» twice on a machine without a desktop session. Those lines are English
//! and say nothing about what the user asked, so while the GPU is opened fd 2 points at
//! `/dev/null` and is restored afterwards; `--verbose` leaves it alone. vramlab's own
//! messages are written only after, through `errors::print_err`.

/// Runs `f` with fd 2 pointed at `/dev/null` (unless `verbose`, or where that cannot be
/// arranged: then `f` simply runs with stderr as it is).
pub fn without_stderr<T>(verbose: bool, f: impl FnOnce() -> T) -> T {
    #[cfg(unix)]
    if !verbose && let Some(_restore) = Redirected::to_null() {
        return f();
    }
    let _ = verbose;
    f()
}

/// While alive, fd 2 is `/dev/null`; dropping it puts the saved descriptor back.
#[cfg(unix)]
struct Redirected {
    saved: std::os::fd::OwnedFd,
}

#[cfg(unix)]
impl Redirected {
    fn to_null() -> Option<Redirected> {
        use std::io::Write;
        use std::os::fd::AsFd;
        let _ = std::io::stderr().flush();
        let saved = rustix::io::dup(std::io::stderr().as_fd()).ok()?;
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .ok()?;
        rustix::stdio::dup2_stderr(&null).ok()?;
        Some(Redirected { saved })
    }
}

#[cfg(unix)]
impl Drop for Redirected {
    fn drop(&mut self) {
        let _ = rustix::stdio::dup2_stderr(&self.saved);
    }
}
