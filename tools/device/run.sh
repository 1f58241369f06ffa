#!/usr/bin/env bash
# One call on an NVIDIA machine: vramlab's WGSL attention kernels through Vulkan, PyTorch's
# attention backends and matmul ceilings on the same shapes, and the peak memory of real
# Hugging Face runs for the estimator's validation. Made by `cargo xtask device-bench
# --pack DIR`; run as `DIR/run.sh` (results under $OUT, or DIR/out). Without an NVIDIA
# GPU the vramlab half runs on whatever Vulkan adapter there is and the PyTorch half
# reports itself absent. QUICK=1 shrinks every sweep to a smoke test; VRAMLAB names
# another vramlab binary than DIR/vramlab.
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
  seqs=256,512; dims=64; heads=2; reps=2; torch_seqs=256; memory_cases=none
else
  # At today's 0.3-0.5 TFLOP/s a tiled run at N = 8192, d = 128 and 32 heads takes
  # 1.7-3.3 s per repetition on an H200: three repetitions and one warm-up keep each
  # dtype's sweep inside VRAMLAB_SECONDS. Raise them once the kernels are fast.
  seqs=1024,4096,8192; dims=64,128; heads=32; reps=${REPEATS:-3}; torch_seqs=1024,4096,8192; memory_cases=
fi
adapter=()
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
    > "$out/nvidia-smi.csv" 2>&1
  adapter=(--adapter NVIDIA)
fi

for dtype in f32 f16; do
  log "vramlab bench attention $dtype (${VK_DRIVER_FILES:-Vulkan por defecto})"
  WGPU_BACKEND=vulkan timeout "${VRAMLAB_SECONDS:-150}" "${VRAMLAB:-$here/vramlab}" bench attention \
    --seq "$seqs" --head-dim "$dims" --heads "$heads" --both-masks --dtype "$dtype" \
    --repeats "$reps" --warmup 1 "${adapter[@]}" --json \
    > "$out/vramlab-attention-$dtype.json" 2> "$out/vramlab-attention-$dtype.err"
  log "vramlab $dtype: salida $?"
done

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  log "PyTorch: atención y techos de matmul"
  timeout "${TORCH_SECONDS:-100}" python3 "$here/attention_torch.py" --seq "$torch_seqs" --head-dim "$dims" \
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
