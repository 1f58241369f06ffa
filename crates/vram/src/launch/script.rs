//! The launch of the runtimes that take a script rather than a command line: a Python
//! file for transformers (inference, or training with `Trainer` or TRL's `SFTTrainer`,
//! PEFT and bitsandbytes) and Unsloth, and the `tune run` overrides of torchtune. Each
//! keyword carries the setting the estimate assumed and its reason, like the serving
//! runtimes' flags.
//!
//! Names and defaults are those of the releases the estimator models (transformers 5,
//! TRL 1.16, PEFT 0.22, Unsloth 2026.10, torchtune 0.6.1): `SFTConfig` turns on
//! gradient checkpointing and bf16 by itself and computes its loss fused per chunk
//! (`loss_type="nll"`, TRL's `add_fused_lm_head`), so a full-logits loss is
//! `Trainer`'s; a model TRL loads by name would be float32, so the script loads it
//! itself with `dtype`; the allocator's variable is `PYTORCH_ALLOC_CONF`, with the older
//! `PYTORCH_CUDA_ALLOC_CONF` for PyTorch before 2.9.

use super::{Arg, ModelArg, arg};
use crate::dtype::Dtype;
use crate::quant::WeightFormat;
use crate::runtime::{Runtime, Task};
use crate::settings::Settings;
use crate::units::group_digits;
use crate::workload::{Attention, LoraTargets, Loss, Optimizer, Precision};

/// A script: its runtime's label, the text and the keywords it sets.
pub(super) struct Script {
    pub runtime: &'static str,
    /// `python`, or `sh` for torchtune's command line.
    pub language: &'static str,
    pub text: String,
    pub args: Vec<Arg>,
    /// What the reader replaces beyond the model (torchtune's config).
    pub placeholder: Option<Arg>,
}

/// A Python call written one keyword per line: `name(\n    k=v,\n)`.
fn call(name: &str, lead: &[&str], args: &[Arg]) -> String {
    let mut out = format!("{name}(\n");
    for l in lead {
        out.push_str(&format!("    {l},\n"));
    }
    for a in args {
        out.push_str(&format!(
            "    {}={},\n",
            a.flag,
            a.value.as_deref().unwrap_or("True")
        ));
    }
    out.push(')');
    out
}

fn py_str(s: &str) -> String {
    format!("{s:?}")
}

/// `torch.bfloat16` and the like for a 16/32-bit format, `"auto"` for a checkpoint kept
/// as stored (FP8, MXFP4, NVFP4, GPTQ/AWQ: their config says how to load them).
fn torch_dtype(format: WeightFormat) -> (&'static str, &'static str) {
    match format {
        WeightFormat::Plain { dtype: Dtype::Fp32 } => ("torch.float32", "los pesos en FP32"),
        WeightFormat::Plain { dtype: Dtype::Fp16 } => ("torch.float16", "los pesos en FP16"),
        WeightFormat::Plain {
            dtype: Dtype::Int8 | Dtype::Nf4,
        }
        | WeightFormat::Nf4 { .. } => (
            "torch.bfloat16",
            "lo que no cuantiza bitsandbytes (incrustaciones, normas, salida) en BF16",
        ),
        WeightFormat::Plain { dtype: Dtype::Bf16 } => ("torch.bfloat16", "los pesos en BF16"),
        _ => (
            "\"auto\"",
            "los pesos como vienen en el checkpoint (FP8, MXFP4, NVFP4, GPTQ/AWQ)",
        ),
    }
}

/// bitsandbytes' configuration for an 8- or 4-bit format, if it is one.
fn bnb(format: WeightFormat) -> Option<Arg> {
    match format {
        WeightFormat::Plain { dtype: Dtype::Int8 } => Some(arg(
            "quantization_config",
            "BitsAndBytesConfig(load_in_8bit=True)".to_owned(),
            "los pesos en INT8 con bitsandbytes",
        )),
        WeightFormat::Nf4 { .. } | WeightFormat::Plain { dtype: Dtype::Nf4 } => {
            let double_quant = match format {
                WeightFormat::Nf4 { double_quant } => double_quant,
                _ => false,
            };
            Some(arg(
                "quantization_config",
                format!(
                    "BitsAndBytesConfig(\n        load_in_4bit=True,\n        bnb_4bit_quant_type=\"nf4\",\n        bnb_4bit_use_double_quant={},\n        bnb_4bit_compute_dtype=torch.bfloat16,\n    )",
                    if double_quant { "True" } else { "False" }
                ),
                if double_quant {
                    "los pesos en NF4 con doble cuantización (QLoRA); sin nf4 explícito, bitsandbytes usaría fp4"
                } else {
                    "los pesos en NF4; sin nf4 explícito, bitsandbytes usaría fp4"
                },
            ))
        }
        _ => None,
    }
}

fn attn(a: Attention) -> Arg {
    let (v, why) = match a {
        Attention::Eager => (
            "\"eager\"",
            "atención ingenua, con la matriz N × N, como se calculó",
        ),
        Attention::Sdpa => (
            "\"sdpa\"",
            "scaled_dot_product_attention de PyTorch: memoria lineal",
        ),
        Attention::Flash => (
            "\"flash_attention_2\"",
            "FlashAttention-2 (el paquete flash-attn)",
        ),
    };
    arg("attn_implementation", v.to_owned(), why)
}

/// The optimizer as `TrainingArguments(optim=…)` names it.
fn optim(o: Optimizer) -> (&'static str, &'static str) {
    match o {
        Optimizer::Adamw => (
            "adamw_torch_fused",
            "AdamW: dos estados por parámetro entrenable",
        ),
        Optimizer::Adamw8bit => ("adamw_bnb_8bit", "AdamW de 8 bits de bitsandbytes"),
        Optimizer::Adafactor => ("adafactor", "Adafactor: el segundo momento factorizado"),
        Optimizer::Sgd | Optimizer::SgdMomentum => ("sgd", "SGD"),
        Optimizer::PagedAdamw => (
            "paged_adamw_32bit",
            "AdamW paginado: los estados pasan a la RAM si falta memoria",
        ),
        Optimizer::PagedAdamw8bit => ("paged_adamw_8bit", "AdamW de 8 bits paginado"),
    }
}

fn targets(t: LoraTargets) -> String {
    match t {
        LoraTargets::AllLinear => "\"all-linear\"".to_owned(),
        LoraTargets::Modules(list) => format!(
            "[{}]",
            list.names()
                .split(',')
                .map(py_str)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn py_bool(on: bool) -> String {
    if on { "True" } else { "False" }.to_owned()
}

/// The batch of the estimate, per GPU.
fn batch_arg(flag: &str, batch: u64) -> Arg {
    arg(
        flag,
        batch.to_string(),
        format!("el lote del cálculo en cada GPU: {batch}"),
    )
}

/// The training sequence length of the estimate.
fn seq_arg(flag: &str, seq: u64) -> Arg {
    arg(
        flag,
        seq.to_string(),
        format!("secuencias de hasta {} tokens", group_digits(seq)),
    )
}

/// Activation checkpointing as the estimate assumed it.
fn checkpointing_arg(flag: &str, on: bool) -> Arg {
    arg(
        flag,
        py_bool(on),
        if on {
            "guarda solo la entrada de cada capa y recalcula el resto"
        } else {
            "sin recálculo: todas las activaciones de cada capa en memoria"
        },
    )
}

fn output_dir() -> Arg {
    arg(
        "output_dir",
        "\"salida\"".to_owned(),
        "dónde guarda los puntos de control",
    )
}

/// The reader's dataset, loaded as TRL and the Trainer take it.
const DATASET: &str =
    "datos = load_dataset(\"DATOS\", split=\"train\")  # tu conjunto, con una columna \"text\"\n";

/// torchtune's config for the task: a placeholder the reader replaces with their model's.
fn torchtune_config(task: Task) -> &'static str {
    match task {
        Task::Full => "CONFIG_full",
        Task::Qlora => "CONFIG_qlora",
        _ => "CONFIG_lora",
    }
}

fn lora_args(s: &Settings) -> Vec<Arg> {
    vec![
        arg("r", s.lora_rank.to_string(), "el rango de los adaptadores"),
        arg(
            "lora_alpha",
            (2 * s.lora_rank).to_string(),
            "la escala de los adaptadores (no cambia la memoria)",
        ),
        arg(
            "target_modules",
            targets(s.lora_targets),
            "las capas con adaptadores, como en el cálculo",
        ),
    ]
}

/// The lines before `import torch`: the allocator's expandable segments, which keep
/// training's changing shapes from fragmenting the cache (PyTorch reads the variable
/// when it first allocates).
const ALLOCATOR: &str = "import os\n\n# Antes de importar torch: segmentos expandibles, menos fragmentación.\nos.environ.setdefault(\"PYTORCH_ALLOC_CONF\", \"expandable_segments:True\")\nos.environ.setdefault(\"PYTORCH_CUDA_ALLOC_CONF\", \"expandable_segments:True\")  # PyTorch < 2.9\n";

fn model_line(model: &ModelArg) -> String {
    format!("MODELO = {}\n", py_str(&model.text))
}

/// transformers 5, inference: the model loaded as estimated and one `generate` of the
/// batch.
fn transformers_inference(model: &ModelArg, s: &Settings) -> Script {
    let (dtype, why) = torch_dtype(s.format);
    let mut load = vec![arg("dtype", dtype.to_owned(), why)];
    load.extend(bnb(s.format));
    load.push(arg(
        "device_map",
        "\"auto\"".to_owned(),
        if s.gpus > 1 {
            format!("las capas repartidas entre las {} GPU", s.gpus)
        } else {
            "el modelo en la GPU".to_owned()
        },
    ));
    load.push(attn(s.attention));
    let mut gen_args = Vec::new();
    let mut tok = vec![arg(
        "return_tensors",
        "\"pt\"".to_owned(),
        "tensores de PyTorch",
    )];
    if let Some(seq) = s.seq {
        tok.push(arg(
            "max_length",
            seq.to_string(),
            format!("el prompt del cálculo: hasta {} tokens", group_digits(seq)),
        ));
        tok.push(arg(
            "truncation",
            "True".to_owned(),
            "corta lo que pase de max_length",
        ));
    }
    gen_args.push(arg(
        "max_new_tokens",
        s.new_tokens.max(1).to_string(),
        match s.new_tokens {
            0 => "solo el primer token: el cálculo es la lectura del prompt".to_owned(),
            n => format!("los tokens generados tras el prompt: {}", group_digits(n)),
        },
    ));
    let batch = arg(
        "prompts",
        format!("[\"…\"] * {}", s.batch),
        format!("el lote del cálculo: {} secuencias a la vez", s.batch),
    );
    let imports = if bnb(s.format).is_some() {
        "from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig"
    } else {
        "from transformers import AutoModelForCausalLM, AutoTokenizer"
    };
    let text = format!(
        "# transformers 5\nimport torch\n{imports}\n\n{}tokenizer = AutoTokenizer.from_pretrained(MODELO)\nmodel = {}\nprompts = {}\ninputs = {}.to(model.device)\nout = {}\n",
        model_line(model),
        call("AutoModelForCausalLM.from_pretrained", &["MODELO"], &load),
        batch.value.as_deref().unwrap_or(""),
        call("tokenizer", &["prompts"], &tok),
        call("model.generate", &["**inputs"], &gen_args),
    );
    let mut args = load;
    args.push(batch);
    args.extend(tok.into_iter().filter(|a| a.flag != "return_tensors"));
    args.extend(gen_args);
    Script {
        language: "python",
        placeholder: None,
        runtime: "transformers 5",
        text,
        args,
    }
}

/// The DeepSpeed configuration as a Python dict for `TrainingArguments(deepspeed=…)`:
/// the stage, the offloads, and "auto" for what the Trainer fills in.
fn deepspeed_dict(s: &Settings) -> Arg {
    let stage = s.zero_stage();
    let mut zero = format!("\"stage\": {stage}");
    if s.cpu_offload || s.offload_params {
        zero.push_str(", \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": True}");
    }
    if s.offload_params {
        zero.push_str(", \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": True}");
    }
    // DeepSpeed refuses the Trainer's own optimizer with a CPU offload: its CPU Adam is
    // named in the file.
    let optimizer = if s.cpu_offload || s.offload_params {
        ",\n        \"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": \"auto\", \"betas\": \"auto\", \"eps\": \"auto\", \"weight_decay\": \"auto\"}}"
    } else {
        ""
    };
    arg(
        "deepspeed",
        format!(
            "{{\n        \"zero_optimization\": {{{zero}}},\n        \"bf16\": {{\"enabled\": \"auto\"}},\n        \"train_micro_batch_size_per_gpu\": \"auto\",\n        \"gradient_accumulation_steps\": \"auto\"{optimizer},\n    }}"
        ),
        match (stage, s.offload_params, s.cpu_offload) {
            (_, true, _) => format!(
                "ZeRO-{stage} de DeepSpeed con pesos y estados del optimizador en la RAM de la CPU"
            ),
            (_, false, true) => format!(
                "ZeRO-{stage} de DeepSpeed con los estados del optimizador en la RAM de la CPU"
            ),
            _ => format!("ZeRO-{stage} de DeepSpeed: cada GPU guarda su parte"),
        },
    )
}

/// transformers 5 + PEFT + TRL, training: `SFTTrainer` when the loss is computed by
/// chunks (TRL's own loss), `Trainer` for the full-logits loss transformers computes.
fn transformers_training(model: &ModelArg, s: &Settings) -> Script {
    let trl = s.loss != Loss::Full;
    let full = s.task == Task::Full;
    // The weights' dtype: a full fine-tune with AMP keeps FP32 masters as the weights.
    // Training runs on 16-bit weights whatever the checkpoint stores; a full
    // fine-tune with AMP keeps FP32 masters as the weights.
    let format = match s.format {
        WeightFormat::Checkpoint => WeightFormat::Plain { dtype: Dtype::Bf16 },
        f => f,
    };
    let (dtype, why) = if full && s.precision == Precision::Amp {
        (
            "torch.float32",
            "pesos en FP32: bf16=True calcula en BF16 sobre ellos (AMP)",
        )
    } else {
        torch_dtype(format)
    };
    let mut load = vec![arg("dtype", dtype.to_owned(), why)];
    load.extend(bnb(s.format));
    load.push(attn(s.attention));
    let mut train = vec![
        output_dir(),
        batch_arg("per_device_train_batch_size", s.batch),
    ];
    if let Some(seq) = s.seq
        && trl
    {
        train.push(seq_arg("max_length", seq));
    }
    train.push(checkpointing_arg("gradient_checkpointing", s.checkpointing));
    let (o, why) = optim(s.optimizer);
    train.push(arg("optim", py_str(o), why));
    if s.optimizer == Optimizer::SgdMomentum {
        train.push(arg(
            "optim_args",
            "\"momentum=0.9\"".to_owned(),
            "SGD con momento: un estado por parámetro",
        ));
    }
    let pure = full && s.precision == Precision::Pure;
    train.push(arg(
        "bf16",
        py_bool(!pure),
        if pure {
            "sin autocast: todo en el formato de los pesos (precisión pura)"
        } else {
            "cálculo en BF16 (autocast)"
        },
    ));
    // ZeRO needs DeepSpeed (or FSDP) on several GPUs; ZeRO-Offload works on one.
    if s.zero_stage() > 0 && (s.gpus > 1 || s.cpu_offload || s.offload_params) {
        train.push(deepspeed_dict(s));
    }
    let lora = matches!(s.task, Task::Lora | Task::Qlora);
    let peft = lora_args(s);
    let mut text = String::from("# transformers 5, PEFT 0.22");
    text.push_str(if trl { ", TRL 1.16\n" } else { "\n" });
    if s.gpus > 1 {
        text.push_str(&format!(
            "# Lánzalo en las {} GPU con: accelerate launch --num_processes {} entrenar.py\n",
            s.gpus, s.gpus
        ));
    }
    text.push_str(ALLOCATOR);
    text.push_str("import torch\nfrom datasets import load_dataset\n");
    if lora {
        text.push_str(if trl {
            "from peft import LoraConfig\n"
        } else {
            "from peft import LoraConfig, get_peft_model\n"
        });
    }
    let mut names = vec!["AutoModelForCausalLM", "AutoTokenizer"];
    if bnb(s.format).is_some() {
        names.push("BitsAndBytesConfig");
    }
    if !trl {
        names.extend([
            "DataCollatorForLanguageModeling",
            "Trainer",
            "TrainingArguments",
        ]);
    }
    text.push_str(&format!("from transformers import {}\n", names.join(", ")));
    if trl {
        text.push_str("from trl import SFTConfig, SFTTrainer\n");
    }
    text.push('\n');
    text.push_str(&model_line(model));
    text.push_str("tokenizer = AutoTokenizer.from_pretrained(MODELO)\n");
    text.push_str(&format!(
        "model = {}\n",
        call("AutoModelForCausalLM.from_pretrained", &["MODELO"], &load)
    ));
    text.push_str(DATASET);
    if trl {
        text.push_str(&format!("args = {}\n", call("SFTConfig", &[], &train)));
        let peft_line = if lora {
            format!(
                "    peft_config={},\n",
                call("LoraConfig", &["task_type=\"CAUSAL_LM\""], &peft).replace('\n', "\n    ")
            )
        } else {
            String::new()
        };
        text.push_str(&format!(
            "trainer = SFTTrainer(\n    model=model,\n    args=args,\n    train_dataset=datos,\n    processing_class=tokenizer,\n{peft_line})\ntrainer.train()\n"
        ));
    } else {
        if lora {
            text.push_str(&format!(
                "model = get_peft_model(model, {})\n",
                call("LoraConfig", &["task_type=\"CAUSAL_LM\""], &peft)
            ));
        }
        let max = s.seq.map_or(String::new(), |seq| {
            format!(", truncation=True, max_length={seq}")
        });
        text.push_str("tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token\n");
        text.push_str(&format!(
            "datos = datos.map(lambda x: tokenizer(x[\"text\"]{max}), remove_columns=datos.column_names)\n"
        ));
        text.push_str(&format!(
            "args = {}\n",
            call("TrainingArguments", &[], &train)
        ));
        text.push_str("trainer = Trainer(\n    model=model,\n    args=args,\n    train_dataset=datos,\n    data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),\n)\ntrainer.train()\n");
    }
    let mut args = load;
    if lora {
        args.extend(peft);
    }
    if !trl && let Some(seq) = s.seq {
        args.push(arg(
            "max_length",
            seq.to_string(),
            format!(
                "secuencias de hasta {} tokens (al tokenizar)",
                group_digits(seq)
            ),
        ));
    }
    args.extend(train.into_iter().filter(|a| a.flag != "output_dir"));
    Script {
        runtime: if trl {
            "transformers 5, PEFT 0.22 y TRL 1.16, con SFTTrainer y su pérdida por trozos"
        } else {
            "transformers 5 y PEFT 0.22, con Trainer y la pérdida sobre los logits completos"
        },
        language: "python",
        text,
        args,
        placeholder: None,
    }
}

/// Unsloth 2026.10 (its own pins of transformers and TRL): `FastLanguageModel` loads
/// and patches the model, TRL trains it.
fn unsloth(model: &ModelArg, s: &Settings) -> Script {
    let four_bit = matches!(
        s.format,
        WeightFormat::Nf4 { .. } | WeightFormat::Plain { dtype: Dtype::Nf4 }
    );
    let mut load = Vec::new();
    if let Some(seq) = s.seq {
        load.push(seq_arg("max_seq_length", seq));
    }
    load.push(arg(
        "load_in_4bit",
        py_bool(four_bit),
        if four_bit {
            "el modelo base en NF4 (QLoRA)"
        } else {
            "el modelo base en 16 bits (Unsloth carga en 4 bits si no se lo dices)"
        },
    ));
    if s.task == Task::Full {
        load.push(arg(
            "full_finetuning",
            "True".to_owned(),
            "se entrenan todos los pesos",
        ));
    }
    let mut peft = lora_args(s);
    peft.push(arg(
        "use_gradient_checkpointing",
        if s.checkpointing {
            "\"unsloth\""
        } else {
            "False"
        }
        .to_owned(),
        if s.checkpointing {
            "el recálculo de Unsloth, que guarda las entradas de cada capa"
        } else {
            "sin recálculo"
        },
    ));
    let (o, why) = optim(s.optimizer);
    let mut train = vec![
        output_dir(),
        batch_arg("per_device_train_batch_size", s.batch),
    ];
    if let Some(seq) = s.seq {
        train.push(seq_arg("max_length", seq));
    }
    train.push(arg("optim", py_str(o), why));
    let lora = s.task != Task::Full;
    let mut text =
        String::from("# Unsloth 2026.10 (instala sus versiones de transformers y TRL)\n");
    text.push_str("from unsloth import FastLanguageModel\nfrom datasets import load_dataset\nfrom trl import SFTConfig, SFTTrainer\n\n");
    text.push_str(&model_line(model));
    text.push_str(&format!(
        "model, tokenizer = {}\n",
        call(
            "FastLanguageModel.from_pretrained",
            &["model_name=MODELO"],
            &load
        )
    ));
    if lora {
        text.push_str(&format!(
            "model = {}\n",
            call("FastLanguageModel.get_peft_model", &["model"], &peft)
        ));
    }
    text.push_str(DATASET);
    text.push_str(&format!(
        "trainer = SFTTrainer(\n    model=model,\n    processing_class=tokenizer,\n    train_dataset=datos,\n    args={},\n)\ntrainer.train()\n",
        call("SFTConfig", &[], &train).replace('\n', "\n    ")
    ));
    let mut args = load;
    if lora {
        args.extend(peft);
    }
    args.extend(train.into_iter().filter(|a| a.flag != "output_dir"));
    Script {
        language: "python",
        placeholder: None,
        runtime: "Unsloth 2026.10",
        text,
        args,
    }
}

/// torchtune 0.6.1's `tune run` with the overrides of what was estimated; the config is
/// the reader's model's (torchtune ships one per family and size).
fn torchtune(s: &Settings) -> Script {
    let distributed = s.gpus > 1;
    let recipe = match (s.task == Task::Full, distributed) {
        (true, false) => "full_finetune_single_device",
        (true, true) => "full_finetune_distributed",
        (false, false) => "lora_finetune_single_device",
        (false, true) => "lora_finetune_distributed",
    };
    let mut args = vec![batch_arg("batch_size", s.batch)];
    if let Some(seq) = s.seq {
        args.push(seq_arg("tokenizer.max_seq_len", seq));
    }
    args.push(checkpointing_arg(
        "enable_activation_checkpointing",
        s.checkpointing,
    ));
    args.push(arg(
        "dtype",
        if s.task == Task::Full && s.precision != Precision::Pure {
            "fp32"
        } else {
            "bf16"
        }
        .to_owned(),
        "el formato de pesos, gradientes y estados",
    ));
    if s.task != Task::Full {
        args.push(arg(
            "model.lora_rank",
            s.lora_rank.to_string(),
            "el rango de los adaptadores",
        ));
    }
    let optimizer = match s.optimizer {
        Optimizer::Adamw8bit => Some("bitsandbytes.optim.AdamW8bit"),
        Optimizer::PagedAdamw8bit => Some("bitsandbytes.optim.PagedAdamW8bit"),
        Optimizer::PagedAdamw => Some("bitsandbytes.optim.PagedAdamW"),
        Optimizer::Adamw if s.task == Task::Full => Some("torch.optim.AdamW"),
        _ => None,
    };
    if let Some(o) = optimizer {
        args.push(arg(
            "optimizer._component_",
            o.to_owned(),
            "el optimizador del cálculo",
        ));
        if o.starts_with("bitsandbytes") {
            args.push(arg("~optimizer.fused", None, "bitsandbytes no tiene fused"));
        }
    }
    let placeholder = torchtune_config(s.task);
    let mut text = String::from("tune run");
    if distributed {
        text.push_str(&format!(" --nproc_per_node {}", s.gpus));
    }
    text.push_str(&format!(" {recipe} --config {placeholder}"));
    for a in &args {
        text.push_str(" \\\n  ");
        text.push_str(&a.flag);
        if let Some(v) = &a.value {
            text.push('=');
            text.push_str(v);
        }
    }
    Script {
        runtime: "torchtune 0.6.1, ya sin desarrollo activo",
        language: "sh",
        text,
        args,
        placeholder: Some(arg(
            placeholder,
            None,
            "la configuración de torchtune de tu modelo (tune ls), p. ej. llama3_1/8B_lora_single_device",
        )),
    }
}

/// The script for a runtime that takes one, or `None` for those with a command line.
pub(super) fn script(model: &ModelArg, s: &Settings) -> Option<Script> {
    match (s.runtime, s.task.is_training()) {
        (Runtime::Transformers, false) => Some(transformers_inference(model, s)),
        (Runtime::Transformers | Runtime::Deepspeed, true) => Some(transformers_training(model, s)),
        (Runtime::Unsloth, true) => Some(unsloth(model, s)),
        (Runtime::Torchtune, true) => Some(torchtune(s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::tests::{Table, assert_known};
    use crate::settings::from_cli_flags;

    fn settings(flags: &[(&str, &str)]) -> Settings {
        from_cli_flags(flags).unwrap_or_else(|e| panic!("{flags:?}: {e:?}"))
    }

    fn text(flags: &[(&str, &str)]) -> String {
        let s = settings(flags);
        let script = script(&ModelArg::named("org/modelo"), &s)
            .unwrap_or_else(|| panic!("{flags:?}: sin guion"));
        script.text
    }

    /// Each runtime and task gets the script of its library, with the settings of the
    /// estimate written as that library names them.
    #[test]
    fn each_runtime_writes_its_own_script() {
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a [&'a str]);
        let cases: &[Case] = &[
            (
                &[("mode", "inference"), ("batch", "4"), ("seq", "4096")],
                &[
                    "from transformers import AutoModelForCausalLM, AutoTokenizer\n",
                    "MODELO = \"org/modelo\"",
                    "    dtype=\"auto\",\n    device_map=\"auto\",\n    attn_implementation=\"sdpa\",",
                    "prompts = [\"…\"] * 4",
                    "max_length=4096",
                    "max_new_tokens=",
                ],
                &["BitsAndBytesConfig", "PYTORCH_ALLOC_CONF"],
            ),
            (
                &[
                    ("mode", "qlora"),
                    ("batch", "2"),
                    ("seq", "2048"),
                    ("loss", "fused"),
                ],
                &[
                    "from trl import SFTConfig, SFTTrainer",
                    "bnb_4bit_quant_type=\"nf4\"",
                    "bnb_4bit_use_double_quant=True",
                    "per_device_train_batch_size=2,",
                    "max_length=2048,",
                    "gradient_checkpointing=True,",
                    "peft_config=LoraConfig(",
                    "os.environ.setdefault(\"PYTORCH_ALLOC_CONF\", \"expandable_segments:True\")",
                ],
                &["= Trainer(", "get_peft_model"],
            ),
            (
                &[
                    ("mode", "lora"),
                    ("loss", "full"),
                    ("lora-targets", "all-linear"),
                    ("optimizer", "adamw8bit"),
                ],
                &[
                    "Trainer, TrainingArguments",
                    "model = get_peft_model(model, LoraConfig(",
                    "target_modules=\"all-linear\"",
                    "optim=\"adamw_bnb_8bit\"",
                    "DataCollatorForLanguageModeling(tokenizer, mlm=False)",
                ],
                &["SFTConfig", "quantization_config"],
            ),
            (
                &[
                    ("mode", "full"),
                    ("gpus", "4"),
                    ("zero", "3"),
                    ("cpu-offload", "true"),
                    ("runtime", "deepspeed"),
                ],
                &[
                    "accelerate launch --num_processes 4",
                    "\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": {\"device\": \"cpu\"",
                    "\"optimizer\": {\"type\": \"AdamW\"",
                ],
                &["LoraConfig"],
            ),
            (
                &[("mode", "qlora"), ("runtime", "unsloth"), ("seq", "4096")],
                &[
                    "from unsloth import FastLanguageModel",
                    "max_seq_length=4096,",
                    "load_in_4bit=True,",
                    "use_gradient_checkpointing=\"unsloth\",",
                ],
                &["full_finetuning"],
            ),
            (
                &[
                    ("mode", "lora"),
                    ("runtime", "torchtune"),
                    ("batch", "2"),
                    ("seq", "2048"),
                    ("optimizer", "paged-adamw8bit"),
                ],
                &[
                    "tune run lora_finetune_single_device --config CONFIG_lora",
                    "  batch_size=2 \\\n",
                    "  tokenizer.max_seq_len=2048",
                    "optimizer._component_=bitsandbytes.optim.PagedAdamW8bit \\\n  ~optimizer.fused",
                ],
                &["--nproc_per_node"],
            ),
        ];
        for (flags, has, lacks) in cases {
            let t = text(flags);
            for h in *has {
                assert!(t.contains(h), "{flags:?}: falta {h:?} en\n{t}");
            }
            for l in *lacks {
                assert!(!t.contains(l), "{flags:?}: sobra {l:?} en\n{t}");
            }
        }
    }

    /// Every keyword a script may set, as its library declares it: transformers 5's
    /// `from_pretrained`, the tokenizer's `__call__` and `generate`; `TrainingArguments`
    /// (`optim`: the `OptimizerNames` values) and TRL 1.16's `SFTConfig` (`max_length`);
    /// PEFT 0.22's `LoraConfig`; Unsloth's `FastLanguageModel.from_pretrained` and
    /// `get_peft_model`; torchtune 0.6.1's recipe configs (`dtype`: bf16 or fp32).
    /// An empty list takes any value.
    const KNOWN: Table = &[
        (
            Runtime::Transformers,
            "dtype",
            &[
                "torch.float32",
                "torch.float16",
                "torch.bfloat16",
                "\"auto\"",
            ],
        ),
        (Runtime::Transformers, "quantization_config", &[]),
        (Runtime::Transformers, "device_map", &["\"auto\""]),
        (
            Runtime::Transformers,
            "attn_implementation",
            &["\"eager\"", "\"sdpa\"", "\"flash_attention_2\""],
        ),
        (Runtime::Transformers, "prompts", &[]),
        (Runtime::Transformers, "max_length", &[]),
        (Runtime::Transformers, "truncation", &["True"]),
        (Runtime::Transformers, "max_new_tokens", &[]),
        (Runtime::Transformers, "r", &[]),
        (Runtime::Transformers, "lora_alpha", &[]),
        (Runtime::Transformers, "target_modules", &[]),
        (Runtime::Transformers, "per_device_train_batch_size", &[]),
        (
            Runtime::Transformers,
            "gradient_checkpointing",
            &["True", "False"],
        ),
        (
            Runtime::Transformers,
            "optim",
            &[
                "\"adamw_torch_fused\"",
                "\"adamw_bnb_8bit\"",
                "\"adafactor\"",
                "\"sgd\"",
                "\"paged_adamw_32bit\"",
                "\"paged_adamw_8bit\"",
            ],
        ),
        (Runtime::Transformers, "optim_args", &[]),
        (Runtime::Transformers, "bf16", &["True", "False"]),
        (Runtime::Transformers, "deepspeed", &[]),
        (Runtime::Unsloth, "max_seq_length", &[]),
        (Runtime::Unsloth, "load_in_4bit", &["True", "False"]),
        (Runtime::Unsloth, "full_finetuning", &["True"]),
        (Runtime::Unsloth, "r", &[]),
        (Runtime::Unsloth, "lora_alpha", &[]),
        (Runtime::Unsloth, "target_modules", &[]),
        (
            Runtime::Unsloth,
            "use_gradient_checkpointing",
            &["\"unsloth\"", "False"],
        ),
        (Runtime::Unsloth, "per_device_train_batch_size", &[]),
        (Runtime::Unsloth, "max_length", &[]),
        (
            Runtime::Unsloth,
            "optim",
            &[
                "\"adamw_torch_fused\"",
                "\"adamw_bnb_8bit\"",
                "\"adafactor\"",
                "\"sgd\"",
                "\"paged_adamw_32bit\"",
                "\"paged_adamw_8bit\"",
            ],
        ),
        (Runtime::Torchtune, "batch_size", &[]),
        (Runtime::Torchtune, "tokenizer.max_seq_len", &[]),
        (
            Runtime::Torchtune,
            "enable_activation_checkpointing",
            &["True", "False"],
        ),
        (Runtime::Torchtune, "dtype", &["bf16", "fp32"]),
        (Runtime::Torchtune, "model.lora_rank", &[]),
        (
            Runtime::Torchtune,
            "optimizer._component_",
            &[
                "torch.optim.AdamW",
                "bitsandbytes.optim.AdamW8bit",
                "bitsandbytes.optim.PagedAdamW8bit",
                "bitsandbytes.optim.PagedAdamW",
            ],
        ),
        (Runtime::Torchtune, "~optimizer.fused", &[]),
    ];

    /// Over runtimes, tasks, formats, optimizers, losses and GPU layouts, every keyword
    /// written is one its library takes, with a value it takes, and is in the script.
    #[test]
    fn every_keyword_is_in_the_librarys_table() {
        let mut seen = 0;
        let tasks = ["inference", "full", "lora", "qlora"];
        let runtimes = ["transformers", "unsloth", "torchtune", "deepspeed"];
        let formats = ["auto", "bf16", "fp16", "int8", "nf4"];
        let optimizers = [
            "adamw",
            "adamw8bit",
            "adafactor",
            "sgd-momentum",
            "paged-adamw8bit",
        ];
        for task in tasks {
            for runtime in runtimes {
                // Only transformers runs inference among these.
                if task == "inference" && runtime != "transformers" {
                    continue;
                }
                for format in formats {
                    for (i, optimizer) in optimizers.iter().enumerate() {
                        let loss = ["full", "fused", "chunked"][i % 3];
                        let layout: &[(&str, &str)] = match i % 3 {
                            0 => &[],
                            1 => &[("gpus", "2"), ("zero", "2")],
                            _ => &[("gpus", "4"), ("zero", "3"), ("offload-params", "true")],
                        };
                        let mut flags = vec![
                            ("mode", task),
                            ("runtime", runtime),
                            ("format", format),
                            ("loss", loss),
                            ("seq", "2048"),
                        ];
                        if task != "inference" {
                            flags.push(("optimizer", optimizer));
                            flags.extend_from_slice(layout);
                        }
                        let s =
                            from_cli_flags(&flags).unwrap_or_else(|e| panic!("{flags:?}: {e:?}"));
                        let Some(script) = script(&ModelArg::named("org/m"), &s) else {
                            assert!(
                                !s.runtime.runs(s.task) || s.runtime == Runtime::AutoAwq,
                                "{flags:?}: sin guion"
                            );
                            continue;
                        };
                        // DeepSpeed's script is transformers'.
                        let rt = match s.runtime {
                            Runtime::Deepspeed => Runtime::Transformers,
                            r => r,
                        };
                        for a in &script.args {
                            assert_known(KNOWN, rt, a, &format!("{flags:?}"));
                            let written = match &a.value {
                                Some(v) if !v.contains('\n') => format!("{}={v}", a.flag),
                                _ => a.flag.clone(),
                            };
                            let spaced = written.replacen('=', " = ", 1);
                            assert!(
                                script.text.contains(&written) || script.text.contains(&spaced),
                                "{flags:?}: {written}\n{}",
                                script.text
                            );
                            assert!(!a.why.is_empty());
                            seen += 1;
                        }
                    }
                }
            }
        }
        assert!(seen > 500, "{seen}");
    }
}
