//! Turns the catalog data files (`data/models.json`, `data/gpus.json`) into Rust
//! constants at build time, so the browser bundle carries plain static data instead of
//! a JSON parser. A malformed data file fails the build with the row that is wrong.
// A build script fails by panicking; the messages name the data row at fault.
#![allow(clippy::expect_used)]

use serde_json::{Map, Value};
use std::fmt::Write;
use std::{env, fs, path::Path};

fn main() {
    println!("cargo::rerun-if-changed=data/models.json");
    println!("cargo::rerun-if-changed=data/gpus.json");
    let out =
        Path::new(&env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("catalog_data.rs");
    let mut code = String::new();
    models(&mut code);
    gpus(&mut code);
    sources(&mut code);
    fs::write(out, code).expect("OUT_DIR is writable");
}

fn load(path: &str) -> Vec<Map<String, Value>> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let rows: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    rows.into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Object(m) => m,
            _ => panic!("{path}: row {i} is not an object"),
        })
        .collect()
}

fn text(m: &Map<String, Value>, key: &str, ctx: &str) -> String {
    let s = m
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{ctx}: missing string `{key}`"));
    format!("{s:?}")
}

fn uint(m: &Map<String, Value>, key: &str, default: Option<u64>, ctx: &str) -> u64 {
    match m.get(key) {
        Some(v) => v
            .as_u64()
            .unwrap_or_else(|| panic!("{ctx}: `{key}` is not an unsigned integer")),
        None => default.unwrap_or_else(|| panic!("{ctx}: missing `{key}`")),
    }
}

fn float(m: &Map<String, Value>, key: &str, ctx: &str) -> String {
    let v = m
        .get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{ctx}: missing number `{key}`"));
    format!("{v:?}")
}

fn flag(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn variant(
    m: &Map<String, Value>,
    key: &str,
    ty: &str,
    options: &[(&str, &str)],
    default: Option<&str>,
    ctx: &str,
) -> String {
    let raw = m
        .get(key)
        .and_then(Value::as_str)
        .or(default)
        .unwrap_or_else(|| panic!("{ctx}: missing `{key}`"));
    let (_, v) = options
        .iter()
        .find(|(k, _)| *k == raw)
        .unwrap_or_else(|| panic!("{ctx}: bad `{key}`: {raw}"));
    format!("{ty}::{v}")
}

/// Where each row's figures were published, in a table of their own: only the pages
/// and commands that show a source reference it, so the estimator's page bundle, which
/// never does, leaves the text out.
fn sources(code: &mut String) {
    code.push_str("const MODEL_SOURCES: &[(&str, &str)] = &[\n");
    for (i, m) in load("data/models.json").iter().enumerate() {
        let ctx = format!("data/models.json row {i}");
        let _ = writeln!(
            code,
            "    ({}, {}),",
            text(m, "id", &ctx),
            text(m, "source", &ctx)
        );
    }
    code.push_str("];\n");
    code.push_str("const GPU_SOURCES: &[GpuSources] = &[\n");
    for (i, g) in load("data/gpus.json").iter().enumerate() {
        let ctx = format!("data/gpus.json row {i}");
        let _ = writeln!(
            code,
            "    GpuSources {{ id: {}, memory: {}, usable: {}, sms: {}, source: {} }},",
            text(g, "id", &ctx),
            text(g, "memory_source", &ctx),
            text(g, "usable_source", &ctx),
            text(g, "sms_source", &ctx),
            text(g, "source", &ctx),
        );
    }
    code.push_str("];\n");
}

fn models(code: &mut String) {
    code.push_str("const MODEL_ROWS: &[ModelRow] = &[\n");
    for (i, m) in load("data/models.json").iter().enumerate() {
        let ctx = format!("data/models.json row {i}");
        let a = m
            .get("arch")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("{ctx}: missing `arch`"));
        let moe = match a.get("moe").and_then(Value::as_object) {
            None => "None".to_owned(),
            Some(x) => format!(
                "Some(Moe {{ experts: {}, experts_per_token: {}, expert_intermediate: {}, shared_experts: {}, dense_layers: {}, shared_intermediate: {} }})",
                uint(x, "experts", None, &ctx),
                uint(x, "experts_per_token", None, &ctx),
                uint(x, "expert_intermediate", None, &ctx),
                uint(x, "shared_experts", Some(0), &ctx),
                uint(x, "dense_layers", Some(0), &ctx),
                uint(x, "shared_intermediate", Some(0), &ctx)
            ),
        };
        let window = match a.get("sliding_window").and_then(Value::as_object) {
            None => "None".to_owned(),
            Some(x) => format!(
                "Some(SlidingWindow {{ window: {}, global_every: {} }})",
                uint(x, "window", None, &ctx),
                uint(x, "global_every", None, &ctx)
            ),
        };
        let mla = match a.get("mla").and_then(Value::as_object) {
            None => "None".to_owned(),
            Some(x) => format!(
                "Some(Mla {{ q_lora_rank: {}, kv_lora_rank: {}, qk_nope_head_dim: {}, qk_rope_head_dim: {}, v_head_dim: {} }})",
                uint(x, "q_lora_rank", Some(0), &ctx),
                uint(x, "kv_lora_rank", None, &ctx),
                uint(x, "qk_nope_head_dim", None, &ctx),
                uint(x, "qk_rope_head_dim", None, &ctx),
                uint(x, "v_head_dim", None, &ctx)
            ),
        };
        let linear = match a.get("linear").and_then(Value::as_object) {
            None => "None".to_owned(),
            Some(x) => format!(
                "Some(LinearAttention {{ full_every: {}, key_heads: {}, key_dim: {}, value_heads: {}, value_dim: {}, conv_kernel: {}, ssm_fp32: {} }})",
                uint(x, "full_every", None, &ctx),
                uint(x, "key_heads", None, &ctx),
                uint(x, "key_dim", None, &ctx),
                uint(x, "value_heads", None, &ctx),
                uint(x, "value_dim", None, &ctx),
                uint(x, "conv_kernel", None, &ctx),
                flag(x, "ssm_fp32")
            ),
        };
        let checkpoint = match a.get("checkpoint").and_then(Value::as_str) {
            None => "None",
            Some("mxfp4") => "Some(crate::quant::WeightFormat::Mxfp4)",
            Some("nvfp4") => "Some(crate::quant::WeightFormat::Nvfp4)",
            Some("fp8-block") => "Some(crate::quant::WeightFormat::Fp8Block)",
            Some("fp8") => {
                "Some(crate::quant::WeightFormat::Plain { dtype: crate::dtype::Dtype::Fp8 })"
            }
            Some("fp32") => {
                "Some(crate::quant::WeightFormat::Plain { dtype: crate::dtype::Dtype::Fp32 })"
            }
            Some(other) => panic!("{ctx}: unknown checkpoint format `{other}`"),
        };
        let rope = match a.get("rope").and_then(Value::as_object) {
            None => "Rope { linear_factor: 1, local: false }".to_owned(),
            Some(x) => format!(
                "Rope {{ linear_factor: {}, local: {} }}",
                uint(x, "linear_factor", Some(1), &ctx),
                flag(x, "local")
            ),
        };
        let vision = match a.get("vision").and_then(Value::as_object) {
            None => "None".to_owned(),
            Some(x) => format!(
                "Some(Vision {{ layers: {}, hidden: {}, heads: {}, intermediate: {}, patch: {}, image: {}, tokens_per_image: {} }})",
                uint(x, "layers", None, &ctx),
                uint(x, "hidden", None, &ctx),
                uint(x, "heads", None, &ctx),
                uint(x, "intermediate", None, &ctx),
                uint(x, "patch", None, &ctx),
                uint(x, "image", None, &ctx),
                uint(x, "tokens_per_image", None, &ctx)
            ),
        };
        let _ = writeln!(
            code,
            "    ModelRow {{ id: {}, name: {}, hf_repo: {}, arch: ArchRow {{ family: {}, layers: {}, hidden: {}, heads: {}, kv_heads: {}, head_dim: {}, intermediate: {}, mlp: {}, vocab: {}, tied_embeddings: {}, norm: {}, norms_per_layer: {}, attn_bias: {}, mlp_bias: {}, qk_norm: {}, learned_positions: {}, token_types: {}, pooler: {}, encoder_only: {}, dropout: {}, moe: {moe}, sliding_window: {window}, mla: {mla}, linear: {linear}, attn_gate: {}, sinks: {}, checkpoint: {checkpoint}, rope: {rope}, vision: {vision}, max_positions: {} }} }},",
            text(m, "id", &ctx),
            text(m, "name", &ctx),
            text(m, "hf_repo", &ctx),
            text(a, "family", &ctx),
            uint(a, "layers", None, &ctx),
            uint(a, "hidden", None, &ctx),
            uint(a, "heads", None, &ctx),
            uint(a, "kv_heads", None, &ctx),
            uint(a, "head_dim", None, &ctx),
            uint(a, "intermediate", None, &ctx),
            variant(
                a,
                "mlp",
                "Mlp",
                &[("gated", "Gated"), ("plain", "Plain")],
                None,
                &ctx
            ),
            uint(a, "vocab", None, &ctx),
            flag(a, "tied_embeddings"),
            variant(
                a,
                "norm",
                "Norm",
                &[("rms", "Rms"), ("layer", "Layer")],
                None,
                &ctx
            ),
            uint(a, "norms_per_layer", Some(2), &ctx),
            variant(
                a,
                "attn_bias",
                "AttnBias",
                &[("none", "None"), ("qkv", "Qkv"), ("all", "All")],
                Some("none"),
                &ctx
            ),
            flag(a, "mlp_bias"),
            flag(a, "qk_norm"),
            uint(a, "learned_positions", Some(0), &ctx),
            uint(a, "token_types", Some(0), &ctx),
            flag(a, "pooler"),
            flag(a, "encoder_only"),
            flag(a, "dropout"),
            flag(a, "attn_gate"),
            flag(a, "sinks"),
            uint(a, "max_positions", None, &ctx),
        );
    }
    code.push_str("];\n");
}

fn gpus(code: &mut String) {
    code.push_str("const GPU_ROWS: &[GpuRow] = &[\n");
    for (i, g) in load("data/gpus.json").iter().enumerate() {
        let ctx = format!("data/gpus.json row {i}");
        let _ = writeln!(
            code,
            "    GpuRow {{ id: {}, name: {}, family: {}, memory_bytes: {}, usable_bytes: {}, bandwidth_gbs: {}, fp16_tflops: {}, fp32_tflops: {}, sms: {}, unified: {} }},",
            text(g, "id", &ctx),
            text(g, "name", &ctx),
            text(g, "family", &ctx),
            uint(g, "memory_bytes", None, &ctx),
            uint(g, "usable_bytes", None, &ctx),
            float(g, "bandwidth_gbs", &ctx),
            float(g, "fp16_tflops", &ctx),
            float(g, "fp32_tflops", &ctx),
            uint(g, "sms", None, &ctx),
            flag(g, "unified"),
        );
    }
    code.push_str("];\n");
}
