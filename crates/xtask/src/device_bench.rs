//! `cargo xtask device-bench --pack DIR`: everything one call on an NVIDIA machine needs,
//! in one folder — a release `vramlab`, Debian's Vulkan loader (`libvulkan1`, which CUDA
//! images lack), and `tools/device/` (the runner, PyTorch's side of the comparison, the
//! memory measurements and the report). `DIR/run.sh` then needs only the driver and,
//! for its PyTorch half, a CUDA build of PyTorch with transformers and PEFT.

use std::path::Path;

use anyhow::{Context, Result};

use crate::{build, cmd, root};

pub fn pack(dir: &Path) -> Result<()> {
    cmd::run(cmd::cargo().args(["build", "--release", "-p", "cli", "--bin", "vramlab"]))?;
    std::fs::create_dir_all(dir).with_context(|| format!("no se pudo crear {}", dir.display()))?;
    let bin = build::target_dir().join("release").join("vramlab");
    copy(&bin, &dir.join("vramlab"))?;
    // Everything in tools/device/ travels: run.sh calls the scripts beside it.
    let tools = root().join("tools").join("device");
    let entries = std::fs::read_dir(&tools)
        .with_context(|| format!("no se pudo leer {}", tools.display()))?;
    for entry in entries {
        let path = entry?.path();
        if let Some(name) = path.file_name().filter(|_| path.is_file()) {
            copy(&path, &dir.join(name))?;
        }
    }
    // The loader is a Debian package; apt fetches it without installing anything here.
    let fetched = std::process::Command::new("apt-get")
        .args(["download", "libvulkan1"])
        .current_dir(dir)
        .status();
    match fetched {
        Ok(s) if s.success() => {}
        _ => eprintln!(
            "xtask: aviso: no se pudo descargar libvulkan1 con apt-get; run.sh usará el \
             cargador de Vulkan del sistema si lo hay"
        ),
    }
    eprintln!(
        "xtask: listo en {}: ejecuta {}/run.sh en la máquina con la GPU (QUICK=1 para una \
         prueba corta)",
        dir.display(),
        dir.display()
    );
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(|_| ())
        .with_context(|| format!("no se pudo copiar {} a {}", from.display(), to.display()))
}
