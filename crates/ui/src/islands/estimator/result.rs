//! The estimator's answer for one set of inputs: total per GPU, verdict and limits,
//! serving plan, speed hint, figures and the breakdown table.

use leptos::prelude::*;
use vram::{ByteSize, Surface, group_digits};

use super::compute::Outcome;
use super::figures::{bar, categories, chart, gpu_table};
use crate::numbers::fixed;

fn verdict(o: &Outcome) -> Option<impl IntoView + use<>> {
    let v = o.eval.verdict?;
    let name = o.settings.gpu.map_or("la GPU", |g| g.name.as_str());
    let text = o.eval.verdict_text(Some(name), Surface::Web)?;
    let mut limits = match (o.eval.max_batch, o.eval.max_seq) {
        (Some(b), Some(s)) => format!(
            "Lote máximo: {} · secuencia máxima: {}.",
            vram::with_margin(b, o.eval.margin.batch, ""),
            vram::with_margin(s, o.eval.margin.seq, " tokens")
        ),
        _ => "Ni siquiera un lote de 1 cabe con esta configuración.".into(),
    };
    if let Some(l) = o.eval.max_gpu_layers {
        limits.push_str(&if l.all() {
            format!(" Caben en la GPU las {} capas y la de salida.", l.layers)
        } else {
            format!(" Capas que caben en la GPU: {} de {}.", l.fit, l.layers)
        });
    }
    Some(view! {
        <p class="est-verdict" data-fits=v.fits().to_string() data-verdict=v.id()><strong>{text}</strong></p>
        <p class="est-limits">{limits}</p>
    })
}

fn serving(o: &Outcome) -> Option<impl IntoView + use<>> {
    let p = o.eval.serving?;
    let share = o.settings.utilization;
    let block = o.settings.block_size;
    let text = if p.kv_budget_bytes == 0 {
        format!(
            "Como servidor (estilo vLLM, {share} % de la GPU): el modelo no deja sitio para la caché KV."
        )
    } else {
        format!(
            "Como servidor (estilo vLLM, {share} % de la GPU, bloques de {block} tokens): quedan {} para la caché KV = {} tokens ({} bytes por token), hasta {} secuencias a la vez de esta longitud.",
            ByteSize(p.kv_budget_bytes).binary(),
            group_digits(p.tokens),
            group_digits(p.kv_bytes_per_token),
            group_digits(p.max_sequences)
        )
    };
    Some(view! { <p class="est-serving">{text}</p> })
}

pub fn result_view(o: Outcome) -> impl IntoView {
    let est = &o.eval.estimate;
    let rows = est
        .breakdown
        .parts()
        .into_iter()
        .zip(categories())
        .map(|(v, (name, class))| {
            view! {
                <tr>
                    <th scope="row"><span class=format!("swatch {class}")></span>{name}</th>
                    <td>{ByteSize(v).binary()}</td>
                    <td>{ByteSize(v).decimal()}</td>
                </tr>
            }
        })
        .collect_view();
    let total_all = (est.gpus > 1).then(|| {
        let text = format!(
            "En total, {} GPU: {} ({}).",
            est.gpus,
            ByteSize(est.total_bytes).binary(),
            ByteSize(est.total_bytes).decimal()
        );
        view! { <p class="est-all-gpus">{text}</p> }
    });
    let speed = o.eval.speed.map(|h| {
        let text = format!(
            "Como mucho (roofline): primer token en ≥ {} ms, generación ≤ {} tokens/s por secuencia.",
            fixed(h.ttft_seconds * 1000.0, 0),
            fixed(h.decode_tokens_per_second, 0)
        );
        view! { <p class="est-speed">{text}</p> }
    });
    let notes = o
        .eval
        .notes
        .iter()
        .map(|n| view! { <li>{n.text(Surface::Web)}</li> })
        .collect_view();
    let per_gpu = est.per_gpu_bytes;
    view! {
        <p class="calc-main">
            <strong class="calc-big est-total">{ByteSize(per_gpu).binary()}</strong>
            <span class="calc-alt">" = " {ByteSize(per_gpu).decimal()} " por GPU"</span>
        </p>
        {total_all}
        {bar(&o)}
        {verdict(&o)}
        {serving(&o)}
        {speed}
        {chart(&o)}
        {gpu_table(per_gpu, o.eval.band.map_or(per_gpu, |b| b.high_bytes(per_gpu, est.breakdown.weights)))}
        <table class="calc-table est-table">
            <caption>"Desglose"</caption>
            <thead>
                <tr><th scope="col">"Categoría"</th><th scope="col">"GiB"</th><th scope="col">"GB"</th></tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
        <ul class="est-notes">{notes}</ul>
    }
}
