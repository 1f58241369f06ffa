"""PyTorch's attention and matmul ceilings on the same shapes as `vramlab bench attention`.

Why: a WGSL kernel's speed only means something next to what the same card does with
the vendor's kernels. This prints one JSON line per measurement: `scaled_dot_product_attention`
with each backend (math in fp32 with TF32 off, memory-efficient in fp32, flash,
memory-efficient and cuDNN in fp16), FLOPs counted as 4·B·H·N²·d (half when causal),
max error against an fp64 reference of the first head, and an fp32 and a bf16 matrix
product as ceilings. `tools/device/run.sh` merges it with vramlab's rows.

    python3 tools/device/attention_torch.py --seq 1024,4096 --head-dim 64 --heads 32
"""

import argparse
import json
import sys
import time

import torch
import torch.nn.functional as F


def emit(obj):
    print(json.dumps(obj), flush=True)


def timed(fn, warm_seconds=0.5, repeats=20):
    """Median, min and p90 in ms of `repeats` calls timed with CUDA events, after
    running for `warm_seconds` so clocks and caches settle."""
    end = time.time() + warm_seconds
    while time.time() < end:
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return {"median_ms": times[len(times) // 2], "min_ms": times[0],
            "p90_ms": times[min(len(times) - 1, (9 * len(times)) // 10)]}


def attention(args):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = [
        ("torch-math", SDPBackend.MATH, torch.float32),
        ("torch-efficient", SDPBackend.EFFICIENT_ATTENTION, torch.float32),
        ("torch-flash", SDPBackend.FLASH_ATTENTION, torch.float16),
        ("torch-efficient", SDPBackend.EFFICIENT_ATTENTION, torch.float16),
        ("torch-cudnn", SDPBackend.CUDNN_ATTENTION, torch.float16),
    ]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for d in args.head_dim:
        for causal in args.masks:
            for n in args.seq:
                b, h = args.batch, args.heads
                gen = torch.Generator(device="cuda").manual_seed(0)
                q, k, v = (torch.randn(b, h, n, d, device="cuda", generator=gen)
                           for _ in range(3))
                ref = F.scaled_dot_product_attention(
                    q[:, :1].double(), k[:, :1].double(), v[:, :1].double(),
                    is_causal=causal)
                flop = 4 * b * h * n * n * d / (2 if causal else 1)
                for name, backend, dtype in backends:
                    row = {"kernel": name, "dtype": "f32" if dtype == torch.float32 else "f16",
                           "seq": n, "head_dim": d, "heads": h, "batch": b, "causal": causal}
                    try:
                        qq, kk, vv = (t.to(dtype) for t in (q, k, v))
                        with sdpa_kernel(backend):
                            def call():
                                return F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal)
                            out = call()
                            row["max_abs_err"] = (out[:, :1].double() - ref).abs().max().item()
                            row.update(timed(call, args.warm, args.repeats))
                        row["tflops"] = flop / (row["median_ms"] * 1e-3) / 1e12
                    except Exception as e:  # a backend that refuses a shape is a result
                        row["error"] = f"{type(e).__name__}: {e}"[:300]
                    torch.cuda.empty_cache()
                    emit(row)


def matmul(args):
    n = 8192
    for name, dtype, tf32 in [("matmul-fp32", torch.float32, False),
                              ("matmul-tf32", torch.float32, True),
                              ("matmul-bf16", torch.bfloat16, False)]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        row = {"kernel": name, "m": n, "n": n, "k": n}
        row.update(timed(lambda: a @ b, args.warm, args.repeats))
        row["tflops"] = 2 * n ** 3 / (row["median_ms"] * 1e-3) / 1e12
        emit(row)
    torch.backends.cuda.matmul.allow_tf32 = False


def main():
    p = argparse.ArgumentParser()
    ints = lambda s: [int(x) for x in s.split(",")]
    p.add_argument("--seq", type=ints, default=[1024, 4096, 8192])
    p.add_argument("--head-dim", type=ints, default=[64, 128])
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--warm", type=float, default=0.5)
    p.add_argument("--causal", choices=["no", "yes", "both"], default="both")
    args = p.parse_args()
    args.masks = {"no": [False], "yes": [True], "both": [False, True]}[args.causal]
    if not torch.cuda.is_available():
        emit({"kernel": "torch", "error": "PyTorch no ve ninguna GPU CUDA"})
        return 0
    props = torch.cuda.get_device_properties(0)
    emit({"kernel": "device", "gpu": props.name, "torch": torch.__version__,
          "cuda": torch.version.cuda, "sms": props.multi_processor_count})
    matmul(args)
    attention(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
