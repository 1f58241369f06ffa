//! Bytes-per-parameter calculator: parameter count × storage format → weight memory.

use leptos::either::Either;
use leptos::prelude::*;
use vram::{ByteSize, Dtype, ParseError, group_digits, parse_count};

/// The computed state of the calculator: the count, or why it was rejected.
fn evaluate(count_text: &str) -> Result<u64, ParseError> {
    parse_count(count_text)
}

/// Weight memory of a model with `params` parameters stored as `dtype`, in every
/// format at once so the reader sees what quantisation buys.
#[island]
pub fn WeightsCalculator(
    /// Initial parameter count as the author wrote it ("7B", "8030261248").
    params: String,
    /// Initial storage format id (`fp32`, `bf16`, `nf4`, ...).
    dtype: String,
) -> impl IntoView {
    let initial_dtype = dtype.parse::<Dtype>().unwrap_or(Dtype::Bf16);
    // The `value` attribute carries the initial text into the static HTML (read without
    // JavaScript); `prop:value` keeps the live input in sync after hydration.
    let initial_text = params.clone();
    let (count_text, set_count_text) = signal(params);
    let (dtype, set_dtype) = signal(initial_dtype);
    let count = Memo::new(move |_| evaluate(&count_text.get()));

    let on_input = move |ev| set_count_text.set(event_target_value(&ev));
    let on_change = move |ev| {
        // The select only offers valid ids; keep the old value if the DOM was tampered with.
        if let Ok(d) = event_target_value(&ev).parse::<Dtype>() {
            set_dtype.set(d);
        }
    };

    let options = Dtype::ALL
        .iter()
        .map(|&d| {
            view! {
                <option value=d.id() selected=move || dtype.get() == d>
                    {d.label()}
                </option>
            }
        })
        .collect_view();

    let result = move || match count.get() {
        Ok(n) => {
            let d = dtype.get();
            let bytes = ByteSize(d.bytes_for(n));
            let (num, den) = d.bits_per_weight();
            let bits = if den == 1 {
                format!("{num} bits")
            } else {
                format!("{num}/{den} bits")
            };
            let rows = Dtype::ALL
                .iter()
                .map(|&row| {
                    let b = ByteSize(row.bytes_for(n));
                    let class = if row == d { "current" } else { "" };
                    view! {
                        <tr class=class>
                            <th scope="row">{row.id()}</th>
                            <td>{b.binary()}</td>
                            <td>{b.decimal()}</td>
                        </tr>
                    }
                })
                .collect_view();
            Either::Left(view! {
                <p class="calc-main">
                    <strong class="calc-big">{bytes.binary()}</strong>
                    <span class="calc-alt">" = " {bytes.decimal()}</span>
                </p>
                <p class="calc-detail">
                    {group_digits(n)} " parámetros × " {bits} " por peso = "
                    {group_digits(bytes.0)} " bytes"
                </p>
                <table class="calc-table">
                    <caption>"Los mismos pesos en cada formato"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Formato"</th>
                            <th scope="col">"GiB (lo que informa nvidia-smi)"</th>
                            <th scope="col">"GB (potencias de 1000)"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            })
        }
        Err(e) => Either::Right(view! { <p class="calc-error" role="alert">{e.to_string()}</p> }),
    };

    view! {
        <div class="calc" role="group" aria-label="Calculadora de memoria de pesos">
            <div class="calc-fields">
                <label>
                    <span>"Parámetros"</span>
                    <input
                        type="text"
                        inputmode="decimal"
                        autocomplete="off"
                        spellcheck="false"
                        value=initial_text
                        prop:value=count_text
                        aria-invalid=move || count.get().is_err().to_string()
                        on:input=on_input
                    />
                </label>
                <label>
                    <span>"Formato de los pesos"</span>
                    <select on:change=on_change>{options}</select>
                </label>
            </div>
            <p class="calc-hint">"Acepta 7B, 7e9, 6,74B o 7000000000."</p>
            <output aria-live="polite">{result}</output>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluate_reports_spanish_errors() {
        assert_eq!(evaluate("7B"), Ok(7_000_000_000));
        let msg = evaluate("siete").unwrap_err().to_string();
        assert!(msg.contains("no es un número válido"), "{msg}");
    }
}
