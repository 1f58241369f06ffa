//! Nothing a user pastes makes `explain` panic, and a huge paste costs linear time.
//!
//! Property tests feed random text, random bytes, token soups built from the formats'
//! own words, and mutations of the corpus (truncated, spliced, duplicated, recased). The
//! large-paste tests only run `explain` on 10 MB inputs built to hit the slow paths
//! (long lines, anchors without bodies, endless tables); they assert no timings, but a
//! quadratic path would make them take hours.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A panic here is a failed test.

use oom::{Explanation, Kind, MAX_MESSAGES, explain};
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

fn corpus() -> &'static [String] {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
        let mut texts = Vec::new();
        for dir in ["corpus", "summaries"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "txt") {
                    let bytes = std::fs::read(&path).unwrap();
                    texts.push(String::from_utf8_lossy(&bytes).into_owned());
                }
            }
        }
        texts.sort();
        texts
    })
}

/// What must hold for any input.
fn invariants(e: &Explanation) {
    assert!(!e.diagnosis.is_empty(), "sin diagnóstico");
    assert!(e.messages.len() < MAX_MESSAGES);
    for d in std::iter::once(&e.primary).chain(&e.messages) {
        if let (Some(total), Some(a), Some(u)) = (
            d.reserved_total_bytes,
            d.allocated_bytes,
            d.reserved_unallocated_bytes,
        ) {
            assert_eq!(
                Some(total),
                a.checked_add(u),
                "reservado ≠ asignado + sin asignar"
            );
        }
        assert!(d.excerpt.len() <= 2000);
        assert!(d.other_processes.len() <= 64);
    }
    if e.primary.kind == Kind::Unknown {
        assert!(e.messages.is_empty());
    }
    serde_json::to_string(e).unwrap();
}

/// Cuts `s` at the nearest character boundary at or before `i`.
fn floor_char(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Insert(usize, String),
    Duplicate(usize, usize),
    Delete(usize, usize),
    Upper(usize, usize),
    Lower(usize, usize),
    Wrap(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), ".{0,40}").prop_map(|(i, s)| Mutation::Insert(i, s)),
        (any::<usize>(), 0usize..400).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        (any::<usize>(), 0usize..60).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 0usize..200).prop_map(|(i, n)| Mutation::Upper(i, n)),
        (any::<usize>(), 0usize..200).prop_map(|(i, n)| Mutation::Lower(i, n)),
        (1usize..120).prop_map(Mutation::Wrap),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let at = |i: usize| {
        floor_char(
            text,
            if text.is_empty() {
                0
            } else {
                i % (text.len() + 1)
            },
        )
    };
    let range = |i: usize, n: usize| {
        let a = at(i);
        (a, floor_char(text, a.saturating_add(n)))
    };
    match m {
        Mutation::Truncate(i) => text[..at(*i)].to_owned(),
        Mutation::Insert(i, s) => {
            let a = at(*i);
            format!("{}{s}{}", &text[..a], &text[a..])
        }
        Mutation::Duplicate(i, n) => {
            let (a, b) = range(*i, *n);
            format!("{}{}{}", &text[..b], &text[a..b], &text[b..])
        }
        Mutation::Delete(i, n) => {
            let (a, b) = range(*i, *n);
            format!("{}{}", &text[..a], &text[b..])
        }
        Mutation::Upper(i, n) => {
            let (a, b) = range(*i, *n);
            format!("{}{}{}", &text[..a], text[a..b].to_uppercase(), &text[b..])
        }
        Mutation::Lower(i, n) => {
            let (a, b) = range(*i, *n);
            format!("{}{}{}", &text[..a], text[a..b].to_lowercase(), &text[b..])
        }
        Mutation::Wrap(width) => {
            // A terminal that hard-wraps every `width` characters.
            let mut out = String::with_capacity(text.len() + text.len() / width + 1);
            for (k, c) in text.chars().enumerate() {
                if k > 0 && k % width == 0 {
                    out.push('\n');
                }
                out.push(c);
            }
            out
        }
    }
}

/// Words of the formats, glued at random: the parsers' edge cases live here.
fn token_soup() -> impl Strategy<Value = String> {
    let tokens = prop::sample::select(vec![
        "CUDA out of memory.",
        "HIP",
        "XPU",
        "MPS backend",
        "out of memory",
        " Tried to allocate ",
        "(GPU 0; ",
        "GPU 1 has a total capacity of ",
        " of which ",
        " is free. ",
        "1.95 GiB",
        "0 bytes",
        "20.00 MiB",
        "18.04 GB",
        "12 ",
        ".",
        "; ",
        ")",
        "(",
        " total capacity; ",
        " already allocated; ",
        " free; ",
        " cached)",
        " reserved in total by PyTorch)",
        " allowed; ",
        "Process ",
        " has ",
        " memory in use. ",
        "this process has ",
        "Of the allocated memory ",
        " is allocated by PyTorch, ",
        "with ",
        " allocated in private pools (e.g., CUDA Graphs), ",
        "and ",
        " is reserved by PyTorch but unallocated.",
        "torch.OutOfMemoryError: ",
        "\n",
        "\r\n",
        "\u{1b}[31m",
        "[rank0]: ",
        "| Allocated memory | ",
        "| from large pool | ",
        "|====|",
        "PyTorch CUDA memory summary, device ID ",
        "| CUDA OOMs: ",
        " | cudaMalloc retries: ",
        "max seq len (",
        "KV cache is needed",
        " available KV cache memory (",
        "999999999999999999999",
        "CUBLAS_STATUS_ALLOC_FAILED",
        "CUDNN_STATUS_NOT_SUPPORTED",
        "workspace",
        "Allocation on device 0 would exceed allowed memory. (",
        "Currently allocated : ",
        "DefaultCPUAllocator: you tried to allocate ",
        "allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory",
        "failed to allocate CUDA",
        "_Host buffer of size ",
        "unable to allocate ",
        "buffer for kv cache",
        "model requires more system memory (",
        "Memory profiling takes 3.2 seconds",
        "CUDA0 model buffer size =  4403.49 MiB",
        "KV buffer size = ",
        "offloaded 33/",
        "total_gpu_memory (79.11GiB) x gpu_memory_utilization (0.9",
        "Available KV cache memory: ",
        "GPU KV cache size: 447,",
        "Maximum concurrency for 32,768 tokens per request: 13.",
        ") than is available (",
        "Free memory on device cuda:0 (19.77/22.05 GiB) ",
        "on startup is less than desired GPU memory utilization (0.9, ",
        "19.84 GiB). Decrease GPU memory utilization",
        "é",
        "\u{a0}",
        "\\n",
    ]);
    prop::collection::vec(tokens, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_text(text in ".{0,2000}") {
        invariants(&explain(&text));
    }

    #[test]
    fn any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        invariants(&explain(&String::from_utf8_lossy(&bytes)));
    }

    #[test]
    fn format_words_in_any_order(text in token_soup()) {
        invariants(&explain(&text));
    }

    #[test]
    fn mutated_corpus(index in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..4)) {
        let texts = corpus();
        let mut text = texts[index % texts.len()].clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        invariants(&explain(&text));
    }

    #[test]
    fn hard_wrapped_messages_decode_the_same(index in any::<usize>(), width in 20usize..200) {
        // Wrapping changes nothing a pasted message says (line prefixes aside).
        let texts = corpus();
        let text = &texts[index % texts.len()];
        prop_assume!(!text.contains('\u{1b}') && !text.contains('|') && !text.contains('['));
        prop_assume!(!text.contains("pid=") && !text.contains("Z "));
        let plain = explain(text);
        let wrapped = explain(&apply(text, &Mutation::Wrap(width)));
        prop_assert_eq!(plain.primary.kind, wrapped.primary.kind);
        prop_assert_eq!(plain.primary.requested_bytes, wrapped.primary.requested_bytes);
        prop_assert_eq!(plain.primary.free_bytes, wrapped.primary.free_bytes);
    }

    #[test]
    fn two_decimal_sizes_round_half_up(hundredths in 0u64..100_000_000, unit in 0usize..4) {
        let (name, factor) = [("KiB", 1u128 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40)][unit];
        let text = format!("{}.{:02} {name}", hundredths / 100, hundredths % 100);
        let exact = (u128::from(hundredths) * factor * 2 + 100) / 200;
        prop_assert_eq!(oom::parse_size(&text).map(u128::from), Ok(exact));
    }

    #[test]
    fn formatted_sizes_parse_back_closely(bytes in 1024u64..(1 << 50)) {
        let shown = oom::format::binary(bytes);
        let back = oom::parse_size(&shown).unwrap();
        let diff = back.abs_diff(bytes);
        prop_assert!(diff <= bytes / 200 + 1, "{shown}: {back} vs {bytes}");
    }
}

const TEN_MB: usize = 10 * 1024 * 1024;

fn repeat_to(piece: &str, size: usize) -> String {
    piece.repeat(size / piece.len().max(1) + 1)
}

#[test]
fn a_realistic_ten_megabyte_log() {
    let texts = corpus();
    let oom_msg = texts
        .iter()
        .find(|t| t.contains("GPU 0 has a total capacity"))
        .unwrap();
    let noise = "2024-05-01T10:00:00.123Z [rank0]: step 1200 loss=1.234 lr=3e-5 \
                 tokens/s=18234 mem=71.2GiB\n";
    let mut text = repeat_to(noise, TEN_MB / 2);
    text.push_str(oom_msg);
    text.push_str(&repeat_to(noise, TEN_MB / 2));
    text.push_str(oom_msg);
    let e = explain(&text);
    assert_eq!(e.primary.kind, Kind::PytorchOom);
    assert_eq!(e.messages.len(), 1);
    invariants(&e);
}

/// Shapes that hit the slow paths: anchors without bodies, endless lists and tables, a
/// message at the end of one enormous line. The first ones run at 10 MB; the rest at
/// 2 MB, which is enough to expose a quadratic path (debug builds scan slowly).
#[test]
fn adversarial_pastes() {
    const TWO_MB: usize = 2 * 1024 * 1024;
    type Case = (usize, fn(usize) -> String);
    let cases: [Case; 17] = [
        (TEN_MB, |n| {
            format!(
                "{}CUDA out of memory. Tried to allocate 2.00 MiB",
                "A".repeat(n)
            )
        }),
        (TEN_MB, |n| repeat_to("A CUDA out of memory ", n)),
        (TEN_MB, |n| {
            repeat_to("| Allocated memory | 1 MiB | 1 MiB | 1 MiB | 1 MiB |\n", n)
        }),
        (TEN_MB, |n| {
            let piece = "1.00 GiB total capacity; ";
            format!(
                "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; {}",
                repeat_to(piece, n)
            )
        }),
        (TEN_MB, |n| {
            let piece = "Process 1 has 1.00 GiB memory in use. ";
            format!(
                "CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 {}",
                repeat_to(piece, n)
            )
        }),
        (TEN_MB, |n| {
            repeat_to(
                "torch.OutOfMemoryError: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx ",
                n,
            )
        }),
        (TWO_MB, |n| repeat_to("Tried to allocate ", n)),
        (TWO_MB, |n| repeat_to("out of ", n)),
        (TWO_MB, |n| {
            format!(
                "PyTorch CUDA memory summary, device ID 0\n{}",
                repeat_to("| Allocated memory | 1 MiB |\n", n)
            )
        }),
        (TWO_MB, |n| {
            repeat_to("PyTorch CUDA memory summary, device ID 0\n", n)
        }),
        (TWO_MB, |n| "1".repeat(n)),
        (TWO_MB, |n| "\n".repeat(n)),
        (TWO_MB, |n| repeat_to("[", n)),
        (TWO_MB, |n| repeat_to("\u{1b}[", n)),
        (TWO_MB, |n| repeat_to("é\r", n)),
        (TWO_MB, |n| repeat_to("max seq len (1) ", n)),
        (TWO_MB, |n| {
            repeat_to(
                "on startup is less than desired GPU memory utilization (0.9, 1 GiB) ",
                n,
            )
        }),
    ];
    for (size, make) in cases {
        invariants(&explain(&make(size)));
    }
}
