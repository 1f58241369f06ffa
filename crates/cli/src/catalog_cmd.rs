//! `vramlab models` and `vramlab gpus`.

use vram::ByteSize;
use vram::catalog::{gpus as all_gpus, models as all_models};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Salida en JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn models(args: &Args) -> Result<String, String> {
    if args.json {
        return serde_json::to_string_pretty(all_models())
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    let mut out = String::from("id                     parámetros        fuente\n");
    for m in all_models() {
        let p = m.arch.param_count();
        out.push_str(&format!(
            "{:<22} {:>15}   {}\n",
            m.id,
            vram::group_digits(p.total),
            m.hf_repo
        ));
    }
    Ok(out)
}

pub fn gpus(args: &Args) -> Result<String, String> {
    if args.json {
        return serde_json::to_string_pretty(all_gpus())
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    let mut out = String::from(
        "id                 utilizable    nvidia-smi  ancho de banda  FP16/BF16   nombre\n",
    );
    for g in all_gpus() {
        out.push_str(&format!(
            "{:<18} {:>10}  {:>10}  {:>7} GB/s  {:>6} TFLOP/s  {}\n",
            g.id,
            ByteSize(g.usable_bytes).binary(),
            ByteSize(g.memory_bytes).binary(),
            g.bandwidth_gbs,
            // The decimal comma, as everywhere else: "59,4".
            numfmt::fixed_es(g.fp16_tflops, u32::from(g.fp16_tflops.fract() != 0.0)),
            g.name
        ));
    }
    Ok(out)
}
