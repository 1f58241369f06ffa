//! `vramlab mcp` end to end: the official SDK's client starts the binary, initializes,
//! lists the tools and calls them; the answers are the CLI's own JSON.

#![allow(clippy::unwrap_used)] // A panic here is a failed test.

mod common;

use common::json as cli;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::process::Command;

fn args(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        _ => panic!("{v}"),
    }
}

/// The tool's text, and whether it is an error.
fn text(r: &CallToolResult) -> (String, bool) {
    let t = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<String>();
    (t, r.is_error == Some(true))
}

#[tokio::test]
async fn a_client_lists_and_calls_the_tools() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vramlab"));
    command.arg("mcp");
    let transport = TokioChildProcess::new(command).unwrap();
    let client = ().serve(transport).await.expect("initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("vramlab")
    );

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["estimate", "plan", "explain"]);
    // The estimate's schema is the settings table: flags' names, their help.
    let schema = &tools[0].input_schema;
    assert_eq!(schema["required"], json!(["model"]));
    assert!(
        schema["properties"]["gpu-memory-utilization"]["description"]
            .as_str()
            .unwrap()
            .contains("gpu_memory_utilization")
    );

    // The same numbers as the CLI.
    let r = client
        .call_tool(CallToolRequestParams::new("estimate").with_arguments(args(json!({
            "model": "qwen2.5-7b", "runtime": "vllm", "gpu": "l4", "seq": 32768, "new-tokens": 0,
        }))))
        .await
        .unwrap();
    let (body, failed) = text(&r);
    assert!(!failed, "{body}");
    let got: Value = serde_json::from_str(&body).unwrap();
    let want = cli(&[
        "estimate",
        "--json",
        "--model",
        "qwen2.5-7b",
        "--runtime",
        "vllm",
        "--gpu",
        "l4",
        "--seq",
        "32768",
        "--new-tokens",
        "0",
    ]);
    assert_eq!(got, want);
    assert_eq!(r.structured_content.as_ref(), Some(&want));

    // The plan of a miss: candidates that fit, each with its launch.
    let r = client
        .call_tool(
            CallToolRequestParams::new("plan").with_arguments(args(json!({
                "model": "llama-3.1-8b", "mode": "qlora", "gpu": "rtx-3060",
            }))),
        )
        .await
        .unwrap();
    let plan: Value = serde_json::from_str(&text(&r).0).unwrap();
    assert_eq!(plan["fits"], false);
    assert_eq!(plan["plan"][0]["fits"], true);
    assert!(plan["plan"][0]["launch"]["command"].is_string());

    // Bad input is the tool's Spanish error, not a broken session.
    let r = client
        .call_tool(
            CallToolRequestParams::new("estimate").with_arguments(args(json!({
                "model": "llama-3.1-8b", "batch": "cero",
            }))),
        )
        .await
        .unwrap();
    let (body, failed) = text(&r);
    assert!(failed && body.contains("--batch"), "{body}");

    // A pasted OOM is explained.
    let r = client
        .call_tool(CallToolRequestParams::new("explain").with_arguments(args(json!({
            "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free. Of the allocated memory 20.10 GiB is allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.",
        }))))
        .await
        .unwrap();
    let (body, failed) = text(&r);
    assert!(!failed, "{body}");
    assert!(body.contains("\"requested_bytes\""), "{body}");

    // An unknown tool is a protocol error; the session goes on.
    assert!(
        client
            .call_tool(CallToolRequestParams::new("borrar"))
            .await
            .is_err()
    );
    assert_eq!(client.list_all_tools().await.unwrap().len(), 3);
    client.cancel().await.unwrap();
}

/// Something that is not the protocol ends the server with its Spanish line, at once.
#[test]
fn garbage_on_stdin_is_a_spanish_error() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{basura\n\xff\xfe\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("vramlab: error: mcp: el cliente no abrió"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
