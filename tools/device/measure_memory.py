"""Peak GPU memory of real Hugging Face runs, for the estimator's validation table.

Why: published figures rarely state every setting, so the estimator is also checked
against runs whose settings we wrote ourselves. Each case builds the model from its
published `config.json` values with random weights (no download: memory does not depend
on the values), runs it the way users do (`Trainer` for training, `generate` for
inference, PEFT for LoRA) and prints one JSON line per case with the allocator's peaks.
`crates/vram/src/validation/measured.rs` turns those lines into cases, with the same
settings written as `vramlab estimate` flags.

Run on a CUDA machine with torch, transformers and peft:
    python3 tools/device/measure_memory.py > memoria.jsonl
"""

import gc
import json
import os
import sys
import tempfile
import time
import traceback

import torch

# config.json values of the Hub repositories (meta-llama/Llama-3.1-8B,
# meta-llama/Llama-3.2-1B, Qwen/Qwen2.5-7B, Qwen/Qwen2.5-1.5B, Qwen/Qwen2.5-0.5B).
CONFIGS = {
    "llama-3.1-8b": ("llama", dict(
        hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
        max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
        tie_word_embeddings=False)),
    "llama-3.2-1b": ("llama", dict(
        hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, head_dim=64, vocab_size=128256,
        max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
        tie_word_embeddings=True)),
    "qwen2.5-7b": ("qwen2", dict(
        hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
        num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
        max_position_embeddings=131072, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=False)),
    "qwen2.5-1.5b": ("qwen2", dict(
        hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
        num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
        max_position_embeddings=131072, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=True)),
    "qwen2.5-0.5b": ("qwen2", dict(
        hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
        num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
        max_position_embeddings=131072, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=True)),
}

# id, model, kind, settings. Training: `Trainer` with its default optimizer, two steps
# (the second holds the optimizer states); `load` is the dtype the weights are loaded
# in (fp32 + bf16=True is autocast). LoRA: PEFT with r=16 on the given targets (None:
# PEFT's default for the architecture). Inference: `generate`, greedy, fixed length.
CASES = [
    ("full-amp-qwen1.5b", "qwen2.5-1.5b", "train",
     dict(load="fp32", batch=4, seq=2048, ckpt=False)),
    ("full-amp-ckpt-qwen1.5b", "qwen2.5-1.5b", "train",
     dict(load="fp32", batch=4, seq=2048, ckpt=True)),
    ("full-amp-ckpt-llama1b", "llama-3.2-1b", "train",
     dict(load="fp32", batch=8, seq=1024, ckpt=True)),
    ("full-bf16-ckpt-qwen0.5b", "qwen2.5-0.5b", "train",
     dict(load="bf16", batch=8, seq=2048, ckpt=True)),
    ("lora-qv-ckpt-llama8b", "llama-3.1-8b", "lora",
     dict(load="bf16", batch=2, seq=4096, ckpt=True, targets=None)),
    ("lora-all-ckpt-llama8b", "llama-3.1-8b", "lora",
     dict(load="bf16", batch=1, seq=8192, ckpt=True, targets="all-linear")),
    ("lora-qv-qwen7b", "qwen2.5-7b", "lora",
     dict(load="bf16", batch=1, seq=2048, ckpt=False, targets=None)),
    ("generate-qwen7b", "qwen2.5-7b", "generate",
     dict(load="bf16", batch=1, seq=8192, new=128)),
    ("generate-b8-llama8b", "llama-3.1-8b", "generate",
     dict(load="bf16", batch=8, seq=2048, new=256)),
]

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def emit(obj):
    print(json.dumps(obj), flush=True)


def build(name, load):
    import transformers

    kind, values = CONFIGS[name]
    config = transformers.AutoConfig.for_model(kind, **values)
    with torch.device("cuda"):
        try:
            model = transformers.AutoModelForCausalLM.from_config(
                config, dtype=DTYPES[load], attn_implementation="sdpa")
        except TypeError:
            model = transformers.AutoModelForCausalLM.from_config(
                config, torch_dtype=DTYPES[load], attn_implementation="sdpa")
    return model


def tokens(model, batch, seq):
    vocab = model.config.vocab_size
    return torch.randint(0, vocab, (batch, seq), device="cuda")


class Rows(torch.utils.data.Dataset):
    def __init__(self, ids):
        self.ids = ids.cpu()

    def __len__(self):
        return self.ids.shape[0] * 4

    def __getitem__(self, i):
        row = self.ids[i % self.ids.shape[0]]
        return {"input_ids": row, "labels": row.clone()}


def train(model, s, out):
    import transformers

    args = transformers.TrainingArguments(
        output_dir=tempfile.mkdtemp(),
        per_device_train_batch_size=s["batch"],
        max_steps=2,
        learning_rate=1e-5,
        bf16=True,
        gradient_checkpointing=s["ckpt"],
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    out["optim"] = str(args.optim)
    out["gradient_checkpointing_kwargs"] = args.gradient_checkpointing_kwargs
    data = Rows(tokens(model, s["batch"], s["seq"]))
    trainer = transformers.Trainer(model=model, args=args, train_dataset=data)
    torch.cuda.reset_peak_memory_stats()
    trainer.train()


def lora(model, s, out):
    import peft

    if s["ckpt"]:
        model.enable_input_require_grads()
    config = peft.LoraConfig(r=16, lora_alpha=32, target_modules=s["targets"],
                             task_type="CAUSAL_LM")
    model = peft.get_peft_model(model, config)
    out["trainable_params"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    out["lora_dtype"] = str(next(p.dtype for p in model.parameters() if p.requires_grad))
    out["peft"] = peft.__version__
    train(model, s, out)


def generate(model, s, out):
    model.eval()
    ids = tokens(model, s["batch"], s["seq"])
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        result = model.generate(ids, attention_mask=torch.ones_like(ids),
                                max_new_tokens=s["new"], min_new_tokens=s["new"],
                                do_sample=False, pad_token_id=0)
    out["generated"] = int(result.shape[1] - ids.shape[1])


def run_case(case):
    cid, name, kind, s = case
    out = {"id": cid, "model": name, "kind": kind, **{k: v for k, v in s.items()}}
    gc.collect()
    torch.cuda.empty_cache()
    out["leftover_bytes"] = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    start = time.time()
    model = None
    try:
        model = build(name, s["load"])
        out["params"] = sum(p.numel() for p in model.parameters())
        out["weights_bytes"] = torch.cuda.memory_allocated()
        {"train": train, "lora": lora, "generate": generate}[kind](model, s, out)
        torch.cuda.synchronize()
        out["peak_allocated"] = torch.cuda.max_memory_allocated()
        out["peak_reserved"] = torch.cuda.max_memory_reserved()
        free, total = torch.cuda.mem_get_info()
        out["context_bytes"] = total - free - torch.cuda.memory_reserved()
    except Exception as e:  # one case failing must not lose the others
        out["error"] = f"{type(e).__name__}: {e}"[:2000]
        out["traceback"] = traceback.format_exc()[-3000:]
        if isinstance(e, torch.OutOfMemoryError):
            out["peak_allocated"] = torch.cuda.max_memory_allocated()
    out["seconds"] = round(time.time() - start, 1)
    del model
    emit(out)


def device_line():
    import transformers

    torch.zeros(1, device="cuda")
    free, total = torch.cuda.mem_get_info()
    props = torch.cuda.get_device_properties(0)
    emit({
        "id": "device",
        "gpu": props.name,
        "total_bytes": total,
        "free_after_init_bytes": free,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    })


def main():
    """Each case in its own process: a fresh CUDA context and allocator, so no case
    inherits another's cached blocks, and a crash loses one line, not the table."""
    import subprocess

    if sys.argv[1:2] == ["--case"]:
        (case,) = [c for c in CASES if c[0] == sys.argv[2]]
        run_case(case)
        return
    device_line()
    only = set(sys.argv[1:])
    deadline = time.time() + float(os.environ.get("MEASURE_SECONDS", "240"))
    for case in CASES:
        if only and case[0] not in only:
            continue
        left = deadline - time.time()
        if left < 20:
            emit({"id": case[0], "error": "skipped: time budget spent"})
            continue
        try:
            done = subprocess.run([sys.executable, __file__, "--case", case[0]],
                                  capture_output=True, text=True, timeout=min(left, 150))
            lines = [l for l in done.stdout.splitlines() if l.startswith('{"id"')]
            if lines:
                print(lines[-1], flush=True)
            else:
                emit({"id": case[0], "error": f"exit {done.returncode}",
                      "stderr": done.stderr[-3000:]})
        except subprocess.TimeoutExpired:
            emit({"id": case[0], "error": "timeout"})


if __name__ == "__main__":
    main()
