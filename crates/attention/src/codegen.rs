//! The straight-line parts of `kernels/tiled.wgsl`, generated for one [`TilePlan`].
//!
//! GPU compilers keep a value in a register only when every access to it has a constant
//! index. WGSL arrays indexed by loop counters depend on the driver unrolling the loop
//! (and, under wgpu, on seeing through the bounds-check clamps it adds); when it does not,
//! the "registers" live in slow local memory. So the per-invocation block (RM rows × CN
//! score columns, RM rows × DW output vec4s) is written out here as named variables,
//! and the kernel file keeps only the loops over the head dimension and the key tiles.
//! Each `//@name` line of the kernel is replaced by the block of that name.

use std::fmt::Write;

use crate::plan::TilePlan;

const LANES: [&str; 4] = ["x", "y", "z", "w"];

/// `tiled.wgsl` with every `//@name` line replaced by its generated block.
pub fn expand(template: &str, plan: &TilePlan) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    for line in template.lines() {
        let trimmed = line.trim_start();
        match trimmed.strip_prefix("//@") {
            Some(name) => {
                let indent = &line[..line.len() - trimmed.len()];
                for generated in block(name.trim(), plan).lines() {
                    out.push_str(indent);
                    out.push_str(generated);
                    out.push('\n');
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The code of one marker. An unknown name is a bug in the kernel file: it becomes a
/// line that fails WGSL validation, which the crate's tests catch for every plan.
fn block(name: &str, plan: &TilePlan) -> String {
    let (rm, cn, dw) = (plan.rm(), plan.cn(), plan.dw());
    let (tr, tc) = (plan.tr, plan.tc);
    let rows = || (0..rm).map(move |i| (i, tr * i));
    let cols = || (0..cn).map(move |c| (c, tc * c));
    let groups = || (0..dw).map(move |w| (w, tc * w));
    let mut s = String::new();
    match name {
        // Running statistics and the output accumulator.
        "init" => {
            for (i, _) in rows() {
                let _ = writeln!(s, "var m{i} = NEG;\nvar l{i} = 0.0;");
                for (w, _) in groups() {
                    let _ = writeln!(s, "var o{i}_{w} = vec4<f32>(0.0);");
                }
            }
        }
        // S = Q·Kᵀ for this invocation's block, one vec4 of the head dimension a step.
        "scores" => {
            for (i, _) in rows() {
                for (c, _) in cols() {
                    let _ = writeln!(s, "var s{i}_{c} = 0.0;");
                }
            }
            s.push_str("for (var d4 = 0u; d4 < D4; d4++) {\n");
            for (i, ri) in rows() {
                let _ = writeln!(s, "    let qa{i} = q_s[(tr + {ri}u) * D4 + d4];");
            }
            for (c, cc) in cols() {
                let _ = writeln!(s, "    let kb{c} = kv_s[slot(tc + {cc}u, d4)];");
            }
            for (i, _) in rows() {
                for (c, _) in cols() {
                    let _ = writeln!(s, "    s{i}_{c} += dot(qa{i}, kb{c});");
                }
            }
            s.push_str("}\n");
        }
        // Keys past the end, and (causal) keys after the query.
        "mask" => {
            for (i, ri) in rows() {
                let _ = writeln!(s, "let qrow{i} = row0 + tr + {ri}u;");
            }
            for (c, cc) in cols() {
                let _ = writeln!(s, "let kcol{c} = col0 + tc + {cc}u;");
            }
            for (i, _) in rows() {
                for (c, _) in cols() {
                    let _ = writeln!(
                        s,
                        "s{i}_{c} = select(s{i}_{c}, NEG, kcol{c} >= n || (causal && kcol{c} > qrow{i}));"
                    );
                }
            }
        }
        // Each invocation's maximum of its columns, per row, for the exchange.
        "rowmax" => {
            for (i, ri) in rows() {
                let _ = writeln!(
                    s,
                    "red[(tr + {ri}u) * TC + tc] = {};",
                    nested("max", (0..cn).map(|c| format!("s{i}_{c}")).collect())
                );
            }
        }
        // The row's new maximum from the exchange, the rescale, P into p_s.
        "softmax" => {
            for (i, ri) in rows() {
                let _ = writeln!(s, "{{\n    let r = tr + {ri}u;\n    var t = NEG;");
                s.push_str("    for (var x = 0u; x < TC; x++) {\n        t = max(t, red[r * TC + x]);\n    }\n");
                let _ = writeln!(
                    s,
                    "    let m_new = max(m{i}, t);\n    let alpha = exp2(m{i} - m_new);\n    m{i} = m_new;"
                );
                for (c, cc) in cols() {
                    let _ = writeln!(s, "    let p{c} = exp2(s{i}_{c} - m_new);");
                    let _ = writeln!(
                        s,
                        "    p_s[r * BC4 + (tc + {cc}u) / 4u][(tc + {cc}u) % 4u] = p{c};"
                    );
                }
                let _ = writeln!(
                    s,
                    "    l{i} = l{i} * alpha + {};",
                    nested("sum", (0..cn).map(|c| format!("p{c}")).collect())
                );
                for (w, _) in groups() {
                    let _ = writeln!(s, "    o{i}_{w} *= alpha;");
                }
                s.push_str("}\n");
            }
        }
        // O += P·V, four keys (one vec4 of P per row) a step.
        "pv" => {
            s.push_str("for (var j4 = 0u; j4 < BC4; j4++) {\n");
            for (i, ri) in rows() {
                let _ = writeln!(s, "    let pa{i} = p_s[(tr + {ri}u) * BC4 + j4];");
            }
            for (e, lane) in LANES.iter().enumerate() {
                for (w, ww) in groups() {
                    let _ = writeln!(
                        s,
                        "    let vb{e}_{w} = kv_s[slot(4u * j4 + {e}u, tc + {ww}u)];"
                    );
                }
                for (i, _) in rows() {
                    for (w, _) in groups() {
                        let _ = writeln!(
                            s,
                            "    o{i}_{w} = fma(vec4<f32>(pa{i}.{lane}), vb{e}_{w}, o{i}_{w});"
                        );
                    }
                }
            }
            s.push_str("}\n");
        }
        // Each invocation's partial row sums, for the final exchange.
        "sums" => {
            for (i, ri) in rows() {
                let _ = writeln!(s, "red[(tr + {ri}u) * TC + tc] = l{i};");
            }
        }
        // Whole row sums, the normalised output and the log-sum-exp (natural log).
        "store" => {
            for (i, ri) in rows() {
                let _ = writeln!(
                    s,
                    "{{\n    let r = tr + {ri}u;\n    var total = 0.0;\n    for (var x = 0u; x < TC; x++) {{\n        total += red[r * TC + x];\n    }}\n    let row = row0 + r;\n    if (row < n) {{\n        let inv = 1.0 / total;"
                );
                for (w, ww) in groups() {
                    let _ = writeln!(
                        s,
                        "        o[base + row * D4 + tc + {ww}u] = vec4<elem>(o{i}_{w} * inv);"
                    );
                }
                let _ = writeln!(
                    s,
                    "        if (tc == 0u) {{\n            lse[bh * n + row] = (m{i} + log2(total)) * LN2;\n        }}\n    }}\n}}"
                );
            }
        }
        unknown => {
            let _ = writeln!(s, "unknown generated block {unknown};");
        }
    }
    s
}

/// `max(max(a, b), c)`-style folding for "max", `a + b + c` for "sum".
fn nested(op: &str, terms: Vec<String>) -> String {
    let mut it = terms.into_iter();
    let first = it.next().unwrap_or_else(|| "0.0".to_owned());
    it.fold(first, |acc, t| match op {
        "max" => format!("max({acc}, {t})"),
        _ => format!("{acc} + {t}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::TILED;

    fn plan(br: u32, bc: u32, tr: u32, tc: u32) -> TilePlan {
        TilePlan {
            head_dim: 64,
            br,
            bc,
            tr,
            tc,
        }
    }

    #[test]
    fn every_marker_is_replaced() {
        let text = expand(TILED, &plan(64, 32, 16, 8));
        assert!(!text.contains("//@"), "{text}");
        assert!(!text.contains("unknown generated block"));
    }

    #[test]
    fn the_block_has_one_variable_per_register() {
        // RM = 4 rows, CN = 4 columns, DW = 2 output groups.
        let p = plan(64, 32, 16, 8);
        let scores = block("scores", &p);
        assert_eq!(scores.matches("+= dot(").count(), 16);
        assert!(scores.contains("s3_3"), "{scores}");
        assert!(scores.contains("kv_s[slot(tc + 24u, d4)]"), "{scores}");
        let pv = block("pv", &p);
        assert_eq!(pv.matches("= fma(").count(), 4 * 4 * 2);
        assert!(pv.contains("vec4<f32>(pa3.w)"), "{pv}");
        // Nothing is indexed by a loop counter except workgroup memory.
        for name in ["init", "scores", "mask", "rowmax", "softmax", "pv", "store"] {
            let b = block(name, &p);
            assert!(!b.contains("array<"), "{name}: {b}");
        }
    }

    /// Generated names must not shadow the kernel's own (`row0`, `col0`, `n`, ...): WGSL
    /// allows shadowing, so a clash would compile and compute the wrong mask.
    #[test]
    fn generated_names_do_not_shadow_the_kernel() {
        let p = plan(64, 32, 16, 8);
        let kernel_names = [
            "row0", "col0", "n", "causal", "bh", "base", "tr", "tc", "block",
        ];
        for name in [
            "init", "scores", "mask", "rowmax", "softmax", "pv", "sums", "store",
        ] {
            for line in block(name, &p).lines() {
                let line = line.trim();
                for decl in ["let ", "var "] {
                    if let Some(rest) = line.strip_prefix(decl) {
                        let ident = rest.split([' ', '=', ':']).next().unwrap_or("");
                        assert!(!kernel_names.contains(&ident), "{name}: {line}");
                    }
                }
            }
        }
    }

    #[test]
    fn an_unknown_marker_fails_loudly() {
        assert!(block("nope", &plan(64, 32, 16, 8)).contains("unknown generated block nope"));
    }

    #[test]
    fn nested_folds() {
        assert_eq!(
            nested("max", vec!["a".into(), "b".into(), "c".into()]),
            "max(max(a, b), c)"
        );
        assert_eq!(nested("sum", vec!["a".into()]), "a");
    }
}
