//! System packages the checks need, installed from Debian when the machine lacks them.

use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd;

/// Debian's Chromium, the browser the end-to-end tests drive.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The Rust target of the browser bundles (rustup adds it when missing).
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// The Vulkan ICD of lavapipe (Mesa's CPU Vulkan driver), if installed.
pub fn lavapipe_icd() -> Option<PathBuf> {
    let dir = Path::new("/usr/share/vulkan/icd.d");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lvp_icd."))
        })
}

fn has_program(name: &str) -> bool {
    cmd::output(Command::new("sh").args(["-c", &format!("command -v {name}")])).is_some()
}

/// What is missing, as Debian package names.
fn missing_packages(browser: bool) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if browser && !Path::new(CHROMIUM).exists() {
        missing.push("chromium");
    }
    if lavapipe_icd().is_none() {
        missing.push("mesa-vulkan-drivers");
    }
    if !Path::new("/usr/lib/x86_64-linux-gnu/libvulkan.so.1").exists()
        && !Path::new("/usr/lib/aarch64-linux-gnu/libvulkan.so.1").exists()
    {
        missing.push("libvulkan1");
    }
    if !has_program("npm") {
        missing.extend(["nodejs", "npm"]);
    }
    // The snapshot viewer's browser test writes its pickles with CPython's own pickle,
    // and the device benchmark's report (tools/device/report.py) is tested on lavapipe.
    if !has_program("python3") {
        missing.push("python3");
    }
    missing
}

fn is_root() -> bool {
    cmd::output(Command::new("id").arg("-u")).is_some_and(|s| s.trim() == "0")
}

/// Installs missing packages with apt-get when running as root; otherwise says exactly
/// what to install.
pub fn ensure_packages(browser: bool) -> Result<()> {
    let missing = missing_packages(browser);
    if missing.is_empty() {
        return Ok(());
    }
    if !(is_root() && has_program("apt-get")) {
        bail!(
            "faltan paquetes del sistema; instálalos con:\n    sudo apt-get install -y {}",
            missing.join(" ")
        );
    }
    eprintln!("xtask: instalando {}", missing.join(" "));
    cmd::run(Command::new("apt-get").arg("update").arg("-qq"))?;
    cmd::run(
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    let still = missing_packages(browser);
    if !still.is_empty() {
        bail!("siguen faltando tras instalar: {}", still.join(" "));
    }
    Ok(())
}

/// Adds the wasm32 target through rustup when it is missing.
pub fn ensure_wasm_target() -> Result<()> {
    let installed = cmd::output(Command::new("rustup").args(["target", "list", "--installed"]))
        .unwrap_or_default();
    if installed.lines().any(|l| l.trim() == WASM_TARGET) {
        return Ok(());
    }
    cmd::run(Command::new("rustup").args(["target", "add", WASM_TARGET]))
}

/// Environment that points wgpu at lavapipe, unless the caller chose a driver.
pub fn gpu_env(command: &mut Command) {
    if std::env::var_os("VK_DRIVER_FILES").is_none()
        && std::env::var_os("VK_ICD_FILENAMES").is_none()
        && let Some(icd) = lavapipe_icd()
    {
        command.env("VK_DRIVER_FILES", icd);
        if std::env::var_os("WGPU_BACKEND").is_none() {
            command.env("WGPU_BACKEND", "vulkan");
        }
    }
    // Mesa warns on every device creation without it.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join("vramlab-xdg");
        let ready = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)));
        if ready.is_ok() {
            command.env("XDG_RUNTIME_DIR", dir);
        }
    }
}
