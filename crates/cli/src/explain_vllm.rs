//! `vramlab explain` on a vLLM start-up log: the logged budget beside the estimator's,
//! term by term (`vram::reconcile`), for the model the log names when the catalog has
//! it. The GPU is the one the log measured ("total_gpu_memory"); without it only the
//! terms that do not depend on the card are compared.

use oom::VllmMemory;
use vram::estimate::ModelInput;
use vram::reconcile::{Unit, VllmLog};
use vram::settings::Runtime;
use vram::{ByteSize, Model, Settings, Task};

/// The comparison as text, or `None` when the log names no catalog model.
pub fn reconciliation(m: &VllmMemory) -> Option<String> {
    let name = m.model.as_deref()?;
    let query = vram::model_search::ModelQuery::new(name);
    let preset = vram::catalog::models().iter().find(|p| query.matches(p))?;
    let mut s = Settings::defaults(Task::Inference, Runtime::Vllm);
    // Without the card's size the plan still gives the per-token and profile terms;
    // the budget terms are left out below.
    s.gpu_memory = Some(m.total_gpu_bytes.unwrap_or(80 * ByteSize::GIB));
    if let Some(p) = m.utilization_percent.and_then(|p| u8::try_from(p).ok()) {
        s.utilization = p.clamp(1, 100);
    }
    let model = Model::new(ModelInput::Arch {
        arch: Box::new(preset.arch.clone()),
        total_params: None,
    });
    let e = vram::evaluate(&model, &s).ok()?;
    let log = VllmLog {
        weights: m.weights_bytes,
        activation_peak: m.activation_peak_bytes,
        non_torch: m.non_torch_bytes,
        kv_cache: m.kv_cache_bytes.filter(|_| m.total_gpu_bytes.is_some()),
        kv_tokens: m.kv_cache_tokens.filter(|_| m.total_gpu_bytes.is_some()),
    };
    let mut terms = vram::reconcile::vllm(&e, &log);
    // The per-token size needs only the log's own two numbers.
    if m.total_gpu_bytes.is_none()
        && let (Some(bytes), Some(tokens)) = (m.kv_cache_bytes, m.kv_cache_tokens)
        && let Some(plan) = &e.serving
        && tokens > 0
    {
        terms.push(vram::reconcile::Term {
            name: "Bytes de caché por token",
            unit: Unit::Bytes,
            logged: bytes / tokens,
            estimated: plan.kv_bytes_per_token,
            why: None,
        });
    }
    if terms.is_empty() {
        return None;
    }
    let card = m.total_gpu_bytes.map_or_else(
        || "GPU sin tamaño en el registro".to_owned(),
        |t| ByteSize(t).binary(),
    );
    let mut out = format!(
        "Frente al estimador (vLLM, {} en bf16, {card}, gpu_memory_utilization {} %)\n",
        preset.name, s.utilization
    );
    for t in &terms {
        let show = |v: u64| match t.unit {
            Unit::Bytes => ByteSize(v).binary(),
            Unit::Tokens => vram::group_digits(v),
        };
        let diff = t.error_percent().map_or_else(String::new, |p| {
            format!(" ({} %)", format!("{p:+.1}").replace('.', ","))
        });
        out.push_str(&format!(
            "  {}: registro {}, vramlab {}{diff}\n",
            t.name,
            show(t.logged),
            show(t.estimated)
        ));
        if let Some(why) = t.why {
            out.push_str(&format!("    {why}\n"));
        }
    }
    Some(out)
}
