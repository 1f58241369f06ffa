#!/usr/bin/env bash
# One call on an NVIDIA machine: vramlab's WGSL attention kernels through Vulkan, PyTorch's
# attention backends and matmul ceilings on the same shapes, and the peak memory of real
# Hugging Face runs for the estimator's validation. Made by `cargo xtask device-bench
# --pack DIR`; run as `DIR/run.sh` (results under $OUT, or DIR/out). Without an NVIDIA
# GPU the vramlab half runs on whatever Vulkan adapter there is and the PyTorch half
# reports itself absent. QUICK=1 shrinks every sweep to a smoke test; VRAMLAB names
# another vramlab binary than DIR/vramlab; MEMORY_CASES=all adds the memory runs of
# measure_memory.py (about 3 minutes); VRAMLAB_SECONDS limits each vramlab sweep.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
log() { printf '==> %s\n' "$*" >&2; }

# The Vulkan loader: carried as Debian's libvulkan1 where the image lacks it.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 '; then
  for f in "$here"/*.deb; do [ -f "$f" ] && dpkg -x "$f" / ; done
  ldconfig 2>/dev/null
fi
# The NVIDIA driver's Vulkan ICD, wherever this image keeps it.
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
         /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$f" ]; then export VK_DRIVER_FILES=$f; fi
done

if [ "${QUICK:-0}" = 1 ]; then
  seqs=256,512; dims=64; heads=2; reps=2; warm=0; torch_seqs=256; memory_cases=none
else
  seqs=1024,4096,8192; dims="64 128"; heads=32; reps=${REPEATS:-5}; warm=0.5; torch_seqs=4096
  memory_cases=${MEMORY_CASES:-none}
fi
adapter=()
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
    > "$out/nvidia-smi.csv" 2>&1
  adapter=(--adapter NVIDIA)
fi

# One `vramlab bench attention` per file, each under its own time limit, so a slow
# sweep loses only its own rows: the JSON array is written when a sweep ends.
bench() {
  local name=$1 secs=$2; shift 2
  log "vramlab $name (${VK_DRIVER_FILES:-Vulkan por defecto})"
  WGPU_BACKEND=vulkan timeout "$secs" "${VRAMLAB:-$here/vramlab}" bench attention \
    "${adapter[@]}" --json "$@" > "$out/$name.json" 2> "$out/$name.err"
  log "vramlab $name: salida $?"
}
secs=${VRAMLAB_SECONDS:-60}
for dtype in f32 f16; do
  for d in $dims; do
    bench "vramlab-attention-$dtype-d$d" "$secs" --seq "$seqs" --head-dim "$d" \
      --heads "$heads" --both-masks --dtype "$dtype" --repeats "$reps" --warmup 2 \
      --warmup-seconds "$warm"
  done
done
if [ "${QUICK:-0}" != 1 ]; then
  # Both kernels at N = 4096 where the naive one's N × N matrix still fits one binding
  # (NVIDIA allows 2 GiB: 8 heads of 4096² f32 scores are 512 MiB; 32 are 2 GiB).
  for d in $dims; do
    bench "vramlab-attention-f32-d$d-h8" "$secs" --seq 4096 --head-dim "$d" --heads 8 \
      --both-masks --repeats "$reps" --warmup 2 --warmup-seconds "$warm"
  done
  # Diagnostics, one shape each: what wgpu's loop-bounding guard costs, and how the
  # tiled kernel's other tilings compare with the one chosen from the adapter's limits.
  bench diag-loop-bounding 40 --seq 4096 --head-dim 64 --heads 32 --loop-bounding \
    --repeats 3 --warmup 1
  for t in 64:64x32x16x8 64:128x16x32x4 64:32x32x8x8 64:64x32x16x4 \
           128:32x32x8x8 128:64x16x16x8 128:32x16x8x8 128:16x32x4x8; do
    bench "diag-tiles-d${t%%:*}-${t#*:}" 30 --seq 4096 --head-dim "${t%%:*}" --heads 32 \
      --kernels tiled --tiles "${t#*:}" --repeats 3 --warmup 1
  done
fi

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  log "PyTorch: atención y techos de matmul"
  timeout "${TORCH_SECONDS:-90}" python3 "$here/attention_torch.py" --seq "$torch_seqs" --head-dim "${dims// /,}" \
    --heads "$heads" > "$out/torch-attention.jsonl" 2> "$out/torch-attention.err"
  if [ "$memory_cases" != none ]; then
    log "PyTorch: memoria de entrenamiento e inferencia"
    MEASURE_SECONDS=${MEASURE_SECONDS:-170} timeout 200 python3 "$here/measure_memory.py" \
      > "$out/memory.jsonl" 2> "$out/memory.err"
  fi
else
  echo '{"kernel": "torch", "error": "PyTorch con CUDA no está disponible"}' \
    > "$out/torch-attention.jsonl"
fi
python3 "$here/report.py" "$out" | tee "$out/report.md"
