//! `tools/device/run.sh`, the one-call NVIDIA benchmark, run here as a smoke test
//! (`QUICK=1`) on this machine's adapter (lavapipe in CI) with the built `vramlab`: its
//! sweeps, its merged report, and the PyTorch half saying it is absent when there is no
//! CUDA PyTorch. Without any adapter it is skipped unless `VRAMLAB_REQUIRE_GPU=1`.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

use std::path::Path;
use std::process::Command;

#[test]
fn the_device_script_measures_and_reports_here() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("vramlab-device-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new("bash")
        .arg(root.join("tools/device/run.sh"))
        .env("QUICK", "1")
        .env("VRAMLAB", env!("CARGO_BIN_EXE_vramlab"))
        .env("OUT", &out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let sweep =
        std::fs::read_to_string(out.join("vramlab-attention-f32-d64.err")).unwrap_or_default();
    if !report.contains("Adaptador de vramlab:") {
        assert!(
            std::env::var_os("VRAMLAB_REQUIRE_GPU").is_none(),
            "sin adaptador: {sweep}\n{report}"
        );
        eprintln!("omitido: {sweep}");
        return;
    }
    for kernel in ["vramlab-naive", "vramlab-tiled"] {
        assert!(report.contains(&format!("| {kernel} | f32 |")), "{report}");
        assert!(report.contains(&format!("| {kernel} | f16 |")), "{report}");
    }
    // Every measured row has a time and an error against the f64 reference.
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("| vramlab-"))
        .collect();
    assert_eq!(rows.len(), 16, "{report}");
    for row in &rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert!(cells[7].parse::<f64>().is_ok(), "{row}");
        assert!(cells[10].parse::<f64>().unwrap() < 1e-2, "{row}");
    }
    // The PyTorch half reports what it found: absent here, a device line on a GPU.
    assert!(report.contains("PyTorch"), "{report}");
    let _ = std::fs::remove_dir_all(&out);
}
