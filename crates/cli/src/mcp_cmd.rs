//! `vramlab mcp`: the estimator, its plan and the OOM explainer as tools of a Model
//! Context Protocol server over stdio (the official `rmcp` SDK), so an agent asks the same
//! engines the CLI and the site use.
//!
//! A tool's arguments become the `vramlab estimate` command line and are read by the
//! same clap parser, so every setting is named, bounded and refused exactly as a flag;
//! the input schema is written from the settings table (`vram::settings::FIELDS`).
//! Answers are the CLI's JSON (`docs/cli-json.md`). stdout carries only the protocol.

use std::sync::Arc;

use clap::Parser;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use vram::Surface;
use vram::settings::FIELDS;

use crate::estimate_cmd;

#[derive(Debug, clap::Args)]
pub struct Args {}

/// The estimate's flags, parsed alone: what a tool call's arguments become.
#[derive(Debug, Parser)]
#[command(name = "estimate", no_binary_name = true)]
struct EstimateLine {
    #[command(flatten)]
    args: estimate_cmd::Args,
}

/// The longest text `explain` takes: what fits in one message of rmcp's stdio transport,
/// which drops a longer line (`DEFAULT_MAX_LINE_LENGTH`, 16 MiB) unread.
const MAX_TEXT: usize = 16 << 20;
/// The longest value of one setting.
const MAX_VALUE: usize = 4096;

/// The estimate's input: the model and every setting, named as the CLI's flags, each
/// with its help and what it admits.
fn estimate_schema() -> JsonObject {
    let mut props = JsonObject::new();
    props.insert(
        "model".into(),
        json!({
            "type": "string",
            "description": "Id del catálogo (vramlab models: llama-3.1-8b, qwen2.5-7b…), o la ruta a un config.json o a un .gguf.",
        }),
    );
    for spec in FIELDS {
        let f = spec.field;
        let kind = if estimate_cmd::is_switch(f) {
            json!("boolean")
        } else {
            json!(["string", "number"])
        };
        props.insert(
            f.cli().into(),
            json!({
                "type": kind,
                "description": format!("{} Admite: {}.", f.help(), f.accepts(Surface::Cli)),
            }),
        );
    }
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(props));
    schema.insert("required".into(), json!(["model"]));
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

fn explain_schema() -> JsonObject {
    let Value::Object(schema) = json!({
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": "El mensaje de error (torch.OutOfMemoryError, vLLM, llama.cpp…), una tabla de torch.cuda.memory_summary() o un registro de arranque.",
            }
        },
        "required": ["text"],
        "additionalProperties": false,
    }) else {
        unreachable!("a JSON object literal")
    };
    schema
}

fn tools() -> Vec<Tool> {
    let estimate = Arc::new(estimate_schema());
    let read_only = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    vec![
        Tool::new(
            "estimate",
            "Memoria de GPU de un modelo y una carga de trabajo (inferencia, servidor, ajuste completo, LoRA, QLoRA) con vLLM, llama.cpp, Ollama, transformers, Unsloth, torchtune o DeepSpeed: desglose, veredicto para la GPU, lote y contexto máximos, la orden o el guion que lo lanza y, si no cabe, el plan. Devuelve el JSON de vramlab estimate --json.",
            estimate.clone(),
        )
        .with_title("Estimar la VRAM")
        .with_annotations(read_only.clone()),
        Tool::new(
            "plan",
            "Si cabe y, si no cabe con margen, los cambios que lo hacen caber, del más barato al más caro, cada uno con su memoria, su coste y su orden de lanzamiento.",
            estimate,
        )
        .with_title("Plan para que quepa")
        .with_annotations(read_only.clone()),
        Tool::new(
            "explain",
            "Explica un error de memoria de GPU pegado: qué pidió, cuánta memoria había, quién la tenía y qué hacer. Devuelve el JSON de vramlab explain --json.",
            explain_schema(),
        )
        .with_title("Explicar un OOM")
        .with_annotations(read_only),
    ]
}

/// A tool call's arguments as the `vramlab estimate` command line, with `--json`.
fn command_line(args: &JsonObject) -> Result<Vec<String>, String> {
    let mut line = Vec::new();
    for (key, value) in args {
        let known = key == "model" || FIELDS.iter().any(|s| s.field.cli() == key);
        if !known {
            return Err(format!(
                "argumento desconocido «{}»",
                key.chars().take(64).collect::<String>()
            ));
        }
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(format!("«{key}» debe ser un texto, un número o un sí/no")),
        };
        if text.len() > MAX_VALUE {
            return Err(format!("«{key}» pasa de {MAX_VALUE} bytes"));
        }
        line.push(format!("--{key}"));
        line.push(text);
    }
    line.push("--json".into());
    Ok(line)
}

/// `vramlab estimate --json` for the arguments, parsed.
fn estimate(args: &JsonObject) -> Result<Value, String> {
    let line = command_line(args)?;
    let parsed =
        EstimateLine::try_parse_from(&line).map_err(|e| crate::errors::clap_message(&e))?;
    let (out, _) = estimate_cmd::run(&parsed.args)?;
    serde_json::from_str(&out).map_err(|e| e.to_string())
}

/// The part of the estimate an agent acts on: the verdict, the launch and the plan.
fn plan(args: &JsonObject) -> Result<Value, String> {
    let v = estimate(args)?;
    let mut out = JsonObject::new();
    for key in [
        "model",
        "per_gpu_bytes",
        "fits",
        "verdict",
        "launch",
        "plan",
    ] {
        out.insert(key.into(), v.get(key).cloned().unwrap_or(Value::Null));
    }
    Ok(Value::Object(out))
}

fn explain(args: &JsonObject) -> Result<Value, String> {
    if let Some(key) = args.keys().find(|k| *k != "text") {
        return Err(format!(
            "argumento desconocido «{}»",
            key.chars().take(64).collect::<String>()
        ));
    }
    let Some(Value::String(text)) = args.get("text") else {
        return Err("falta «text»: el mensaje de error o la tabla, como texto".into());
    };
    if text.len() > MAX_TEXT {
        return Err(format!("«text» pasa de {} MiB", MAX_TEXT >> 20));
    }
    serde_json::to_value(oom::explain(text)).map_err(|e| e.to_string())
}

/// A tool's answer: its JSON as text and as structured content, or its Spanish error
/// (`isError`, which the agent reads, rather than a protocol error).
fn answer(result: Result<Value, String>) -> CallToolResult {
    match result {
        Ok(v) => {
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            r.structured_content = Some(v);
            r
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("vramlab: error: {e}"))]),
    }
}

struct Server {
    tools: Vec<Tool>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("vramlab", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "vramlab: memoria de GPU de modelos de lenguaje. «estimate» y «plan» toman el modelo y los ajustes con los nombres de las opciones de vramlab estimate; «explain», un error de memoria pegado.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "estimate" => estimate(&args),
            "plan" => plan(&args),
            "explain" => explain(&args),
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "herramienta desconocida «{}»: estimate, plan o explain",
                        other.chars().take(64).collect::<String>()
                    ),
                    None,
                ));
            }
        };
        Ok(answer(result).into())
    }
}

/// Serves until the client closes stdin.
pub fn run(_args: &Args) -> Result<String, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let server = Server { tools: tools() };
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| {
                format!("mcp: el cliente no abrió la sesión de Model Context Protocol (se esperaba «initialize» por la entrada estándar): {e}")
            })?;
        service
            .waiting()
            .await
            .map_err(|e| format!("mcp: la sesión terminó con un fallo: {e}"))?;
        Ok(String::new())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> JsonObject {
        match v {
            Value::Object(o) => o,
            _ => panic!("{v}"),
        }
    }

    /// Every setting of the table is in the schema, under its CLI flag's name.
    #[test]
    fn the_schema_is_the_settings_table() {
        let schema = estimate_schema();
        let props = schema["properties"].as_object().unwrap();
        assert_eq!(props.len(), FIELDS.len() + 1);
        for spec in FIELDS {
            let p = &props[spec.field.cli()];
            assert!(p["description"].as_str().unwrap().contains("Admite:"));
        }
        assert_eq!(props["grad-checkpointing"]["type"], "boolean");
    }

    /// Arguments become flags; what is not a setting, or not a scalar, is refused.
    #[test]
    fn arguments_become_the_command_line() {
        let line = command_line(&object(
            json!({"model": "llama-3.1-8b", "batch": 4, "serve": true}),
        ))
        .unwrap();
        // In the order of the arguments' names (a JSON object's keys are a set).
        assert_eq!(
            line,
            [
                "--batch",
                "4",
                "--model",
                "llama-3.1-8b",
                "--serve",
                "true",
                "--json"
            ]
        );
        for (bad, why) in [
            (
                json!({"model": "x", "rm": "-rf"}),
                "argumento desconocido «rm»",
            ),
            (json!({"model": ["a"]}), "«model» debe ser"),
            (json!({"model": "x".repeat(5000)}), "pasa de 4096 bytes"),
        ] {
            let e = command_line(&object(bad)).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
        // A flag that is not a setting of this table is not passed through.
        let e = estimate(&object(json!({"model": "llama-3.1-8b", "json": true}))).unwrap_err();
        assert!(e.contains("argumento desconocido «json»"), "{e}");
        let e = estimate(&object(json!({"model": "llama-3.1-8b", "batch": 0}))).unwrap_err();
        assert!(e.contains("--batch"), "{e}");
    }
}
