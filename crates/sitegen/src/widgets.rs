//! The widget registry: which shortcode becomes which island, and with what props.
//!
//! Shortcode attributes are Spanish (authors write Spanish), island props are English
//! (code is English); this table is the one place that maps one to the other and
//! validates values at build time, so a typo in content fails the build instead of
//! shipping a broken widget.

use leptos::prelude::*;
use ui::islands::{GpuCheck, WeightsCalculator};

use crate::shortcode::Shortcode;

/// Build-time facts widgets may need (hashed bundle URLs).
#[derive(Debug, Clone, Default)]
pub struct WidgetContext {
    pub gpu_js: String,
    pub gpu_wasm: String,
}

/// Every shortcode name with its attributes, for error messages and documentation.
pub const KNOWN: &[(&str, &[&str])] = &[
    ("pesos", &["parametros", "formato"]),
    ("prueba-webgpu", &[]),
];

fn check_attrs(sc: &Shortcode, allowed: &[&str]) -> Result<(), String> {
    for (key, _) in &sc.attrs {
        if !allowed.contains(&key.as_str()) {
            let list = if allowed.is_empty() {
                "ninguno".to_owned()
            } else {
                allowed.join(", ")
            };
            return Err(format!(
                "el shortcode «{}» no tiene el atributo «{key}» (admite: {list})",
                sc.name
            ));
        }
    }
    Ok(())
}

fn render(view: impl FnOnce() -> AnyView) -> String {
    Owner::new().with(|| view().to_html())
}

/// Renders the island for `sc`, or says why it cannot.
pub fn render_widget(sc: &Shortcode, ctx: &WidgetContext) -> Result<String, String> {
    match sc.name.as_str() {
        "pesos" => {
            check_attrs(sc, &["parametros", "formato"])?;
            let params = sc.attr("parametros").unwrap_or("7B").to_owned();
            vram::parse_count(&params).map_err(|e| format!("parametros=\"{params}\": {e}"))?;
            let dtype = sc.attr("formato").unwrap_or("bf16").to_owned();
            let parsed: vram::Dtype = dtype
                .parse()
                .map_err(|e| format!("formato=\"{dtype}\": {e}"))?;
            let dtype = parsed.id().to_owned();
            Ok(render(move || {
                view! { <WeightsCalculator params=params dtype=dtype /> }.into_any()
            }))
        }
        "prueba-webgpu" => {
            check_attrs(sc, &[])?;
            if ctx.gpu_js.is_empty() || ctx.gpu_wasm.is_empty() {
                return Err("falta el paquete gpu-web: compila con `cargo xtask build`".into());
            }
            let (js_url, wasm_url) = (ctx.gpu_js.clone(), ctx.gpu_wasm.clone());
            Ok(render(move || {
                view! { <GpuCheck js_url=js_url wasm_url=wasm_url /> }.into_any()
            }))
        }
        other => {
            let names: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
            Err(format!(
                "shortcode desconocido «{other}» (existen: {})",
                names.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shortcode::parse;

    fn ctx() -> WidgetContext {
        WidgetContext {
            gpu_js: "/pkg/gpu_web.1.js".into(),
            gpu_wasm: "/pkg/gpu_web_bg.1.wasm".into(),
        }
    }

    #[test]
    fn weights_island_renders_with_props_and_ssr_result() {
        let sc = parse(r#"{{< pesos parametros="7B" formato="fp32" >}}"#).unwrap();
        let html = render_widget(&sc, &ctx()).unwrap();
        assert!(html.contains("<leptos-island"), "{html}");
        assert!(
            html.contains("data-component=\"WeightsCalculator"),
            "{html}"
        );
        // The result is computed at build time, so it reads without JavaScript.
        assert!(html.contains("26,08 GiB"), "{html}");
        assert!(html.contains("28,00 GB"), "{html}");
    }

    #[test]
    fn gpu_island_gets_bundle_urls() {
        let sc = parse("{{< prueba-webgpu >}}").unwrap();
        let html = render_widget(&sc, &ctx()).unwrap();
        assert!(html.contains("gpu_web_bg.1.wasm"), "{html}");
        assert!(render_widget(&sc, &WidgetContext::default()).is_err());
    }

    #[test]
    fn bad_shortcodes_are_errors() {
        let cases = [
            (r#"{{< pesos parametros="siete" >}}"#, "parametros"),
            (r#"{{< pesos formato="fp7" >}}"#, "formato"),
            (r#"{{< pesos modelo="x" >}}"#, "no tiene el atributo"),
            (r#"{{< prueba-webgpu n="1" >}}"#, "ninguno"),
            (r#"{{< inexistente >}}"#, "desconocido"),
        ];
        for (src, want) in cases {
            let err = render_widget(&parse(src).unwrap(), &ctx()).unwrap_err();
            assert!(err.contains(want), "{src}: {err}");
        }
    }
}
