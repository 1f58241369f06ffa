//! Byte counts written for Spanish readers: "1,95 GiB", decimal comma, two decimals.
//!
//! The diagnosis cites the numbers it decoded; byte sizes print as everywhere in
//! vramlab (`numfmt`), counts in groups of three as everywhere else.

pub use numfmt::{binary, both, decimal};

/// A count in groups of three: "131 072" (`numfmt::group_digits`).
pub fn count(n: u64) -> String {
    numfmt::group_digits(n)
}

/// What a ggml buffer was for, in Spanish (`Decoded::buffer`'s values).
pub fn buffer_purpose(buffer: &str) -> &'static str {
    match buffer {
        "weights" => "los pesos del modelo",
        "kv-cache" => "la caché KV",
        "compute" => "el cómputo (grafo)",
        _ => "otro uso",
    }
}

/// The numbers that tell one message from another of the same paste (every rank of a
/// multi-GPU log prints its own): device, request, free and in-use memory, in one line.
pub fn key_numbers(d: &crate::Decoded) -> String {
    let mut parts = Vec::new();
    if let Some(g) = d.gpu_index {
        parts.push(format!("GPU {g}"));
    }
    if let Some(r) = d.requested_bytes {
        parts.push(format!("pidió {}", binary(r)));
    }
    if let Some(f) = d.free_bytes {
        parts.push(format!("libre {}", binary(f)));
    }
    if let Some(a) = d.allocated_bytes {
        parts.push(format!("asignada {}", binary(a)));
    }
    if let Some(r) = d.reserved_total_bytes {
        parts.push(format!("reservada {}", binary(r)));
    }
    parts.join(", ")
}

/// What a llama.cpp buffer holds, in Spanish.
fn ggml_purpose(purpose: &str) -> &'static str {
    match purpose {
        "weights" => "pesos",
        "kv-cache" => "caché KV",
        "compute" => "cómputo",
        "output" => "salida",
        "projector-compute" => "imagen del proyector de visión",
        _ => "otro uso",
    }
}

/// llama.cpp's load log as (label, value) rows, one per buffer, then its settings.
pub fn ggml_rows(g: &crate::GgmlMemory) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = g
        .buffers
        .iter()
        .map(|b| {
            (
                format!("{} · {}", b.device, ggml_purpose(&b.purpose)),
                both(b.bytes),
            )
        })
        .collect();
    if let Some(n) = g.n_ctx {
        out.push((
            "Contexto (n_ctx)".to_owned(),
            format!("{} tokens", count(n)),
        ));
    }
    if let Some(n) = g.n_ctx_per_seq {
        out.push((
            "Contexto por secuencia (n_ctx_per_seq)".to_owned(),
            format!("{} tokens", count(n)),
        ));
    }
    if let Some(n) = g.n_ctx_train {
        out.push((
            "Contexto de entrenamiento del modelo (n_ctx_train)".to_owned(),
            format!("{} tokens", count(n)),
        ));
    }
    if let Some(n) = g.n_seq_max {
        out.push(("Secuencias a la vez (n_seq_max)".to_owned(), count(n)));
    }
    if let Some(unified) = g.kv_unified {
        out.push((
            "Una sola caché KV para todas (kv_unified)".to_owned(),
            if unified {
                "sí"
            } else {
                "no (una por secuencia)"
            }
            .to_owned(),
        ));
    }
    if let Some(n) = g.n_batch {
        out.push(("Lote (n_batch)".to_owned(), format!("{} tokens", count(n))));
    }
    if let (Some(n), Some(ctx)) = (g.n_slots, g.n_ctx_slot) {
        out.push((
            "Ranuras de llama-server (n_slots)".to_owned(),
            format!("{n} de {} tokens cada una", count(ctx)),
        ));
    }
    if let Some(b) = g.ctx_size_bytes {
        out.push(("Metadatos de los tensores (ggml ctx)".to_owned(), both(b)));
    }
    if let Some(d) = &g.device {
        out.push(("GPU (la primera del registro)".to_owned(), d.clone()));
    }
    if let Some(b) = g.model_size_bytes {
        let bpw = g.bits_per_weight_x100.map_or_else(String::new, |x| {
            format!(", {},{:02} bits por peso", x / 100, x % 100)
        });
        out.push((
            "Tamaño del modelo (archivo)".to_owned(),
            format!("{}{bpw}", both(b)),
        ));
    }
    if let Some(n) = g.n_copies {
        out.push((
            "Copias del grafo (paralelismo de tubería)".to_owned(),
            count(n),
        ));
    }
    if let Some(b) = g.kv_total_bytes {
        let halves = match (g.kv_k_bytes, g.kv_v_bytes, g.kv_ckv_bytes) {
            (Some(k), Some(v), _) => format!(": K {} y V {}", binary(k), binary(v)),
            (_, _, Some(c)) => format!(
                ": latente c^KV {}{}",
                binary(c),
                g.kv_kvt_bytes
                    .map_or_else(String::new, |t| format!(" y kv^T {}", binary(t)))
            ),
            _ => String::new(),
        };
        out.push((
            "Caché KV en total (todos los dispositivos)".to_owned(),
            format!("{}{halves}", both(b)),
        ));
    }
    if let (Some(cells), Some(layers)) = (g.kv_cells, g.kv_layers) {
        let windowed = match (g.kv_swa_cells, g.kv_swa_layers) {
            (Some(c), Some(l)) => format!(
                ", y {} × {} en las de ventana deslizante",
                count(c),
                count(l)
            ),
            _ => String::new(),
        };
        out.push((
            "Celdas de la caché KV".to_owned(),
            format!("{} celdas × {layers} capas{windowed}", count(cells)),
        ));
    }
    if let Some(n) = g.n_ubatch {
        out.push((
            "Micro-lote (n_ubatch)".to_owned(),
            format!("{} tokens", count(n)),
        ));
    }
    if let Some(on) = g.flash_attn {
        out.push((
            "Flash attention".to_owned(),
            if on { "activada" } else { "desactivada" }.to_owned(),
        ));
    }
    if let Some(k) = &g.kv_type {
        out.push(("Tipo de la caché KV".to_owned(), k.clone()));
    }
    if let (Some(on), Some(total)) = (g.layers_on_gpu, g.layers_total) {
        out.push(("Capas en la GPU".to_owned(), format!("{on} de {total}")));
    }
    if let Some(f) = &g.file_type {
        out.push(("Cuantización".to_owned(), f.clone()));
    }
    if let Some(m) = &g.model {
        out.push(("Modelo".to_owned(), m.clone()));
    }
    out
}

/// llama.cpp's load log in one sentence: what each device holds.
pub fn ggml_sentence(g: &crate::GgmlMemory) -> Option<String> {
    let mut devices: Vec<(&str, Vec<String>)> = Vec::new();
    for b in &g.buffers {
        let part = format!("{} de {}", binary(b.bytes), ggml_purpose(&b.purpose));
        match devices.iter_mut().find(|(d, _)| *d == b.device) {
            Some((_, parts)) => parts.push(part),
            None => devices.push((&b.device, vec![part])),
        }
    }
    if devices.is_empty() {
        return None;
    }
    let list: Vec<String> = devices
        .iter()
        .map(|(d, parts)| format!("{d}: {}", parts.join(", ")))
        .collect();
    let mut out = format!("llama.cpp reservó {}.", list.join("; "));
    if let Some(n) = g.n_ctx {
        out.push_str(&format!(" Contexto de {} tokens.", count(n)));
    }
    if let (Some(on), Some(total)) = (g.layers_on_gpu, g.layers_total) {
        out.push_str(&format!(" {on} de {total} capas en la GPU."));
    }
    Some(out)
}

/// Ollama's offload line as (label, value) rows.
pub fn ollama_rows(m: &crate::OllamaMemory) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let list = |v: &[u64]| v.iter().map(|b| both(*b)).collect::<Vec<_>>().join(" + ");
    if let Some(l) = &m.library {
        out.push(("Ollama: biblioteca".to_owned(), l.clone()));
    }
    if let (Some(on), Some(all)) = (m.layers_offload, m.layers_model) {
        out.push((
            "Ollama: capas en la GPU".to_owned(),
            format!("{on} de {all}"),
        ));
    }
    if let Some(r) = m.layers_requested {
        out.push((
            "Ollama: capas pedidas (num_gpu)".to_owned(),
            if r < 0 {
                "las que quepan (-1)".to_owned()
            } else {
                r.to_string()
            },
        ));
    }
    if let Some(split) = &m.layers_split {
        out.push(("Ollama: capas por GPU".to_owned(), split.clone()));
    }
    if !m.available_bytes.is_empty() {
        out.push((
            "Ollama: libre en la GPU".to_owned(),
            list(&m.available_bytes),
        ));
    }
    let sizes = [
        (
            "Ollama: margen reservado (gpu_overhead)",
            m.gpu_overhead_bytes,
        ),
        (
            "Ollama: necesita entero (required.full)",
            m.required_full_bytes,
        ),
        (
            "Ollama: necesita lo que cargó (required.partial)",
            m.required_partial_bytes,
        ),
        ("Ollama: caché KV (required.kv)", m.required_kv_bytes),
        ("Ollama: pesos (weights.total)", m.weights_total_bytes),
        (
            "Ollama: pesos de las capas (weights.repeating)",
            m.weights_repeating_bytes,
        ),
        (
            "Ollama: pesos fuera de las capas (weights.nonrepeating)",
            m.weights_nonrepeating_bytes,
        ),
        (
            "Ollama: grafo entero en la GPU (graph.full)",
            m.graph_full_bytes,
        ),
        (
            "Ollama: grafo con parte en la CPU (graph.partial)",
            m.graph_partial_bytes,
        ),
        (
            "Ollama: pesos del proyector (projector.weights)",
            m.projector_weights_bytes,
        ),
        (
            "Ollama: grafo del proyector (projector.graph)",
            m.projector_graph_bytes,
        ),
    ];
    for (label, v) in sizes {
        if let Some(v) = v {
            out.push((label.to_owned(), both(v)));
        }
    }
    for (label, v) in [
        ("Ollama: RAM del equipo", m.system_total_bytes),
        ("Ollama: RAM libre", m.system_free_bytes),
        ("Ollama: swap libre", m.system_free_swap_bytes),
    ] {
        if let Some(v) = v {
            out.push((label.to_owned(), both(v)));
        }
    }
    if !m.allocations_bytes.is_empty() {
        out.push((
            "Ollama: reparto por GPU (allocations)".to_owned(),
            list(&m.allocations_bytes),
        ));
    }
    out
}

/// ComfyUI's load line or AUTOMATIC1111's memory footer as (label, value) rows.
pub fn frontend_rows(m: &crate::FrontendMemory) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (who, sizes) = if m.frontend == "comfyui" {
        (
            "ComfyUI",
            [
                ("para los pesos (usable)", m.usable_bytes),
                ("pesos en la GPU (loaded)", m.loaded_bytes),
                ("pesos en la RAM (offloaded)", m.offloaded_bytes),
                ("búfer para las capas en la RAM", m.buffer_reserved_bytes),
            ],
        )
    } else {
        (
            "Webui",
            [
                ("pico activo de PyTorch (A)", m.active_peak_bytes),
                ("pico reservado por PyTorch (R)", m.reserved_peak_bytes),
                ("pico de toda la GPU (Sys)", m.system_peak_bytes),
                ("memoria total de la GPU", m.system_total_bytes),
            ],
        )
    };
    if let Some(model) = &m.model {
        out.push((format!("{who}: modelo"), model.clone()));
    }
    for (label, v) in sizes {
        if let Some(v) = v {
            out.push((format!("{who}: {label}"), both(v)));
        }
    }
    if let Some(n) = m.lowvram_patches {
        out.push((format!("{who}: parches en modo lowvram"), n.to_string()));
    }
    if let Some(full) = m.full_load {
        out.push((
            format!("{who}: carga completa"),
            if full { "sí" } else { "no" }.to_owned(),
        ));
    }
    out
}

/// vLLM's start-up report as (label, value) rows, for the page and the CLI.
pub fn vllm_rows(m: &crate::VllmMemory) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let bytes = [
        ("Memoria total de la GPU (según vLLM)", m.total_gpu_bytes),
        (
            "Para esta instancia (gpu_memory_utilization)",
            m.budget_bytes,
        ),
        ("Pesos", m.weights_bytes),
        (
            "Pesos al cargar (model loading took)",
            m.model_loading_bytes,
        ),
        (
            "Activaciones (pico de la pasada de prueba)",
            m.activation_peak_bytes,
        ),
        ("Fuera de PyTorch", m.non_torch_bytes),
        ("Todo menos la caché KV", m.non_kv_bytes),
        ("Caché KV", m.kv_cache_bytes),
        (
            "Pico de PyTorch en el perfilado (peak_torch_memory)",
            m.peak_torch_bytes,
        ),
        (
            "En uso al empezar (initial_memory_usage)",
            m.initial_usage_bytes,
        ),
        (
            "En uso tras el perfilado (memory_usage_post_profile)",
            m.post_profile_usage_bytes,
        ),
    ];
    for (label, v) in bytes {
        if let Some(v) = v {
            out.push((label, both(v)));
        }
    }
    if let Some(p) = m.utilization_text() {
        out.push(("gpu_memory_utilization", format!("{p}\u{a0}%")));
    }
    if let Some(t) = m.kv_cache_tokens {
        out.push(("Tokens en la caché KV", count(t)));
    }
    if let Some(n) = m.gpu_blocks {
        out.push(("Bloques de caché en la GPU", count(n)));
    }
    if let Some(n) = m.cpu_blocks {
        out.push(("Bloques de caché en la CPU (swap)", count(n)));
    }
    if let (Some(t), Some(x)) = (m.concurrency_tokens, m.concurrency_x100) {
        out.push((
            "Peticiones completas a la vez",
            format!("{},{:02} (de {} tokens)", x / 100, x % 100, count(t)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_decimal() {
        assert_eq!(binary(0), "0 B");
        assert_eq!(binary(512), "512 B");
        assert_eq!(binary(2_093_796_557), "1,95 GiB");
        assert_eq!(decimal(2_093_796_557), "2,09 GB");
        assert_eq!(binary(20 << 20), "20,00 MiB");
        assert_eq!(binary(u64::MAX), "16,00 EiB");
        assert_eq!(both(1 << 30), "1,00 GiB (1,07 GB)");
    }

    #[test]
    fn counts() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(131_072), "131\u{202f}072");
        assert_eq!(count(1_000_000), "1\u{202f}000\u{202f}000");
    }
}
