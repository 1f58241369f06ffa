//! The estimator's answer for one set of inputs: total per GPU, verdict and limits,
//! serving plan, speed hint, figures and the breakdown table.

use leptos::prelude::*;
use vram::ByteSize;

use super::compute::Outcome;
use super::figures::{CATEGORIES, bar, chart, gpu_table, values};
use crate::numbers::fixed;

fn verdict(o: &Outcome) -> Option<impl IntoView + use<>> {
    let g = o.gpu?;
    let fits = o.per_gpu <= g.memory_bytes;
    let each = if o.gpus > 1 { " (por GPU)" } else { "" };
    let text = if fits {
        format!(
            "Cabe en {}{each}: sobran {}.",
            g.name,
            ByteSize(g.memory_bytes - o.per_gpu).binary()
        )
    } else {
        format!(
            "No cabe en {}{each}: faltan {}.",
            g.name,
            ByteSize(o.per_gpu - g.memory_bytes).binary()
        )
    };
    let limits = match (o.max_batch, o.max_seq) {
        (Some(b), Some(s)) => format!(
            "Lote máximo: {} · secuencia máxima: {} tokens.",
            vram::group_digits(b),
            vram::group_digits(s)
        ),
        _ => "Ni siquiera un lote de 1 cabe con esta configuración.".into(),
    };
    Some(view! {
        <p class="est-verdict" data-fits=fits.to_string()><strong>{text}</strong></p>
        <p class="est-limits">{limits}</p>
    })
}

fn serving(o: &Outcome) -> Option<impl IntoView + use<>> {
    let p = o.serving?;
    let text = if p.kv_budget_bytes == 0 {
        "Como servidor (estilo vLLM, 90 % de la GPU): el modelo no deja sitio para la caché KV."
            .to_owned()
    } else {
        format!(
            "Como servidor (estilo vLLM, 90 % de la GPU, bloques de 16 tokens): quedan {} para la caché KV = {} tokens ({} bytes por token), hasta {} secuencias a la vez de esta longitud.",
            ByteSize(p.kv_budget_bytes).binary(),
            vram::group_digits(p.tokens),
            vram::group_digits(p.kv_bytes_per_token),
            vram::group_digits(p.max_sequences)
        )
    };
    Some(view! { <p class="est-serving">{text}</p> })
}

pub fn result_view(o: Outcome) -> impl IntoView {
    let rows = values(&o.breakdown)
        .into_iter()
        .zip(CATEGORIES)
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
    let total_all = (o.gpus > 1).then(|| {
        let text = format!(
            "En total, {} GPU: {} ({}).",
            o.gpus,
            ByteSize(o.total).binary(),
            ByteSize(o.total).decimal()
        );
        view! { <p class="est-all-gpus">{text}</p> }
    });
    let speed = o.speed.map(|h| {
        let text = format!(
            "Como mucho (roofline): primer token en ≥ {} ms, generación ≤ {} tokens/s por secuencia.",
            fixed(h.ttft_seconds * 1000.0, 0),
            fixed(h.decode_tokens_per_second, 0)
        );
        view! { <p class="est-speed">{text}</p> }
    });
    let notes = o
        .notes
        .iter()
        .map(|n| view! { <li>{n.clone()}</li> })
        .collect_view();
    view! {
        <p class="calc-main">
            <strong class="calc-big est-total">{ByteSize(o.per_gpu).binary()}</strong>
            <span class="calc-alt">" = " {ByteSize(o.per_gpu).decimal()} " por GPU"</span>
        </p>
        {total_all}
        {bar(&o)}
        {verdict(&o)}
        {serving(&o)}
        {speed}
        {chart(&o)}
        {gpu_table(o.per_gpu)}
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
