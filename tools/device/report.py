"""Merge the device benchmark's outputs into one Markdown report.

Why: vramlab's kernels, PyTorch's backends and the memory runs come from three programs;
the comparison is only readable side by side, per shape, in one table.

    python3 tools/device/report.py OUT_DIR
"""

import glob
import json
import os
import sys


def load_jsonl(path):
    rows = []
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return rows


def load_vramlab(out):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "vramlab-attention*.json"))):
        try:
            rows.extend(json.load(open(path, encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as e:
            print(f"<!-- {os.path.basename(path)}: {e} -->")
    return rows


def load_diagnostics(out):
    """The one-shape diagnostic sweeps (`diag-*.json`): loop bounding, other tilings."""
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "diag-*.json"))):
        name = os.path.basename(path)[: -len(".json")]
        try:
            rows.extend(dict(r, run=name) for r in json.load(open(path, encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as e:
            rows.append({"run": name, "error": f"sin resultado ({e.__class__.__name__})"})
    return rows


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "out"
    ours = load_vramlab(out)
    torch_rows = load_jsonl(os.path.join(out, "torch-attention.jsonl"))
    memory = load_jsonl(os.path.join(out, "memory.jsonl"))

    smi = os.path.join(out, "nvidia-smi.csv")
    if os.path.exists(smi):
        print("```\n" + open(smi, encoding="utf-8").read().strip() + "\n```\n")
    peak = None  # the card's FP32 peak in TFLOP/s, from vramlab's catalog
    for r in ours:
        if r.get("adapter"):
            print(f"Adaptador de vramlab: {r['adapter']} ({r.get('backend')}), "
                  f"tiempos: {r.get('timing')}\n")
            break
    for r in ours:
        if r.get("gflops") and r.get("peak_fraction"):
            peak = r["gflops"] / r["peak_fraction"] / 1e3
            print(f"Pico FP32 de referencia: {peak:.1f} TFLOP/s ({r.get('peak_gpu')})\n")
            break
    for r in torch_rows:
        if r.get("kernel") == "device":
            print(f"PyTorch {r.get('torch')} (CUDA {r.get('cuda')}) en {r.get('gpu')}\n")
        elif r.get("kernel") == "torch":
            print(f"PyTorch: {r.get('error')}\n")

    merged = []
    for r in ours:
        merged.append({
            "kernel": "vramlab-" + r["kernel"], "dtype": r["dtype"], "seq": r["seq"],
            "head_dim": r["head_dim"], "heads": r["heads"], "batch": r["batch"],
            "causal": r["causal"], "median_ms": r.get("median_ms"),
            "tflops": r["gflops"] / 1e3 if r.get("gflops") else None,
            "max_abs_err": r.get("max_abs_err"), "error": r.get("error"),
        })
    merged.extend(r for r in torch_rows if "seq" in r)
    shapes = sorted({(r["head_dim"], r["causal"], r["seq"], r["heads"], r["batch"])
                     for r in merged})
    print("| d | causal | N | B·H | kernel | tipo | ms (mediana) | TFLOP/s | % pico FP32 | error máx. | nota |")
    print("| ---: | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | --- |")
    for d, causal, n, h, b in shapes:
        for r in merged:
            if (r["head_dim"], r["causal"], r["seq"], r["heads"], r["batch"]) != (d, causal, n, h, b):
                continue
            t = r.get("tflops")
            frac = f"{100 * t / peak:.1f}" if (t and peak) else "—"
            note = (r.get("error") or "")[:120].replace("|", "/")
            print(f"| {d} | {'sí' if causal else 'no'} | {n} | {b * h} | {r['kernel']} | "
                  f"{r['dtype']} | {fmt(r.get('median_ms'), '.3f')} | {fmt(t, '.3g')} | "
                  f"{frac} | {fmt(r.get('max_abs_err'), '.1e')} | {note} |")

    diagnostics = load_diagnostics(out)
    if diagnostics:
        print("\n| diagnóstico | kernel | d | N | B·H | bloques | ms (mediana) | TFLOP/s | error máx. | nota |")
        print("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |")
        for r in diagnostics:
            t = r["gflops"] / 1e3 if r.get("gflops") else None
            bh = r["heads"] * r["batch"] if "heads" in r else None
            note = (r.get("error") or "")[:120].replace("|", "/")
            print(f"| {r['run']} | {r.get('kernel', '—')} | {r.get('head_dim', '—')} | "
                  f"{r.get('seq', '—')} | {fmt(bh, 'd')} | {r.get('tile') or '—'} | "
                  f"{fmt(r.get('median_ms'), '.3f')} | {fmt(t, '.3g')} | "
                  f"{fmt(r.get('max_abs_err'), '.1e')} | {note} |")

    ceilings = [r for r in torch_rows if str(r.get("kernel", "")).startswith("matmul")]
    if ceilings:
        print("\n| techo | tamaño | ms | TFLOP/s |\n| --- | --- | ---: | ---: |")
        for r in ceilings:
            print(f"| {r['kernel']} | {r['m']}³ | {r['median_ms']:.3f} | {r['tflops']:.1f} |")

    if memory:
        print("\n| caso | modelo | lote × contexto | pico asignado | pico reservado | contexto CUDA | nota |")
        print("| --- | --- | --- | ---: | ---: | ---: | --- |")
        gib = lambda x: "—" if x is None else f"{x / 2**30:.2f} GiB"
        for r in memory:
            if r.get("id") == "device":
                print(f"| dispositivo | {r.get('gpu')} | — | — | total {gib(r.get('total_bytes'))} | "
                      f"— | torch {r.get('torch')}, transformers {r.get('transformers')} |")
                continue
            print(f"| {r.get('id')} | {r.get('model', '—')} | {r.get('batch', '—')} × {r.get('seq', '—')} | "
                  f"{gib(r.get('peak_allocated'))} | {gib(r.get('peak_reserved'))} | "
                  f"{gib(r.get('context_bytes'))} | {(r.get('error') or '')[:100]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
