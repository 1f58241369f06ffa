//! One vocabulary for everything a user asks the estimator: task, weight format,
//! batch, context, GPUs, sharding, serving… typed once, spelled in one table.
//!
//! The CLI's flags, the estimator page's link, the widget's attributes and the site's
//! shortcodes all read and write settings through [`FIELDS`] and the functions here, so
//! a setting has one name, one parser, one set of bounds and one Spanish message on
//! every surface, and a value written by one surface reads back the same on another (a
//! property test checks it). The model is not a setting: each surface finds it its own
//! way (a catalog id, a file, an import), then hands `vram::evaluate` a model and
//! these settings.
//!
//! Defaults depend on the task (QLoRA loads NF4 weights and trains with gradient
//! checkpointing, as PEFT and TRL do); [`Settings::with_task`] moves the values that
//! were still the old task's defaults to the new task's, so switching tasks keeps what
//! the user changed and updates what they did not.

mod choice;
mod count;
mod field;
mod value;

pub use choice::{
    ATTENTIONS, CUDA_GRAPHS, Choice, CudaGraphs, KV_DTYPES, LORA_TARGETS, LOSSES, OPTIMIZERS,
    PRECISIONS, Precision, RUNTIMES, Runtime, TASKS, Task, ZERO_STAGES, entry, find,
};
pub use count::{Bounds, CountProblem, Unit};
pub use field::{FIELDS, Field, Spec};
pub use value::{Problem, SettingError};

use crate::catalog::Gpu;
use crate::default_context::{self, Opened};
use crate::dtype::Dtype;
use crate::estimate::{MAX_BATCH, MAX_GPUS, MAX_SEQ};
use crate::quant::WeightFormat;
use crate::workload::{Attention, Engine, KvDtype, LoraTargets, Loss, Mode, Optimizer, Workload};

/// Where settings are read from and written to. Both accept every spelling; they
/// differ in which spelling they print and in the words of some messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    /// `vramlab` flags and JSON: canonical ids.
    Cli,
    /// Links, widget attributes and shortcodes: Spanish keys and values.
    Web,
}

/// The model's key in links and widget attributes (each surface resolves it itself).
pub const MODEL_KEY: &str = "modelo";
/// The GPU a web surface shows when nothing says otherwise.
pub const WEB_GPU: &str = "rtx-4090";
/// The catalog model a web surface shows when nothing says otherwise.
pub const WEB_MODEL: &str = "llama-3.1-8b";

/// Every setting of a workload, typed and within bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The catalog GPU (capacity, CUDA context, speed).
    pub gpu: Option<&'static Gpu>,
    /// Memory per GPU; wins over the catalog GPU's capacity.
    pub gpu_memory: Option<u64>,
    /// Memory the display and other processes already hold on each GPU.
    pub reserve: u64,
    pub task: Task,
    /// The software that runs it.
    pub runtime: Runtime,
    pub format: WeightFormat,
    pub batch: u64,
    /// Prompt (or training sequence) length in tokens; `None` (`auto`, the default
    /// of the runtimes that choose one) is the context the runtime opens the model
    /// with, less the generated tokens ([`crate::default_context`]).
    pub seq: Option<u64>,
    /// Tokens generated after the prompt.
    pub new_tokens: u64,
    pub attention: Attention,
    pub checkpointing: bool,
    pub optimizer: Optimizer,
    pub precision: Precision,
    /// How the loss meets the logits.
    pub loss: Loss,
    pub lora_rank: u32,
    pub lora_targets: LoraTargets,
    pub kv_dtype: KvDtype,
    pub gpus: u32,
    /// ZeRO stage 0–3 for training on several GPUs (3 is also FSDP).
    pub zero: u8,
    /// Tensor-parallel degree; `None` is automatic (every GPU for inference, as vLLM's
    /// `--tensor-parallel-size`; none for training).
    pub tp: Option<u32>,
    pub pp: u32,
    /// ZeRO-Offload: optimizer states in CPU memory.
    pub cpu_offload: bool,
    /// ZeRO-3 with the parameters in CPU memory too (DeepSpeed's `offload_param`,
    /// FSDP's `CPUOffload(offload_params=True)`); implies `cpu_offload`.
    pub offload_params: bool,
    /// Budget a vLLM-style server (paged KV cache) instead of one request.
    pub serve: bool,
    /// vLLM's `gpu_memory_utilization` in basis points (hundredths of a percent): 9000
    /// is 0.9. vLLM takes any float; four decimals cover every value seen in its logs.
    pub utilization: u16,
    /// vLLM's `max_num_batched_tokens`: the tokens of its start-up profile pass;
    /// `None` is vLLM V1's default for the GPU (`serving::Profile::vllm_default`).
    pub batched_tokens: Option<u64>,
    /// vLLM's `max_num_seqs`: the rows its start-up sampler pass takes; `None` is vLLM
    /// V1's default for the GPU.
    pub max_seqs: Option<u64>,
    /// Where vLLM's CUDA graphs take their memory from (`--enforce-eager` turns them
    /// off; vLLM 0.21 reserves them out of the KV cache, older versions did not).
    pub cuda_graphs: CudaGraphs,
    /// Tokens per block of the paged KV cache.
    pub block_size: u32,
    /// llama.cpp's `-ngl`: layers on the GPU; [`GPU_LAYERS_ALL`] is all of them and
    /// the output, `None` (`auto`, llama.cpp's default `-1`) is what its `--fit`
    /// places: everything when it leaves 1 GiB free, else (without `--n-cpu-moe`) a
    /// MoE's experts move to the CPU first and then the fewest whole layers that do.
    pub gpu_layers: Option<u32>,
    /// llama.cpp's micro-batch (`-ub`): the tokens its compute buffer is sized for.
    pub ubatch: u32,
    /// llama.cpp's `--n-cpu-moe`: the first layers whose routed experts stay in CPU
    /// RAM; 0 is none, [`CPU_MOE_ALL`] is `--cpu-moe` (every layer).
    pub cpu_moe: u32,
    /// Peak bandwidth of the CPU's RAM in GB/s: what bounds generation when llama.cpp
    /// leaves layers or experts there.
    pub ram_gbs: u32,
    /// llama.cpp's `--mmproj`: a multimodal model's vision projector is loaded (Ollama
    /// loads it for the models that carry one, so it is on by default there).
    pub mmproj: bool,
    /// Measured CUDA context per GPU; `None` uses the GPU family's default.
    pub cuda_context: Option<u64>,
    /// llama.cpp's KV layout when a pasted log pins it (`reconcile::ggml_settings`):
    /// `Some(n)` with n > 0 is one pool shared by n slots (`kv_unified`), `Some(0)` a
    /// stream per sequence; `None` leaves it to the runtime (llama-server's `-np auto`,
    /// four slots over one pool, when the batch is 1). Not a vocabulary setting.
    pub slots: Option<u32>,
    /// llama.cpp's `-ngl` counts the output layer first (builds since December 2025,
    /// PR 18148); false for a pasted log of an older build. Not a vocabulary setting.
    pub ngl_output_first: bool,
}

/// The prompt (or training sequence) a runtime without a context of its own gets.
pub const DEFAULT_SEQ: u64 = 4096;

pub(crate) const BATCH: Bounds = Bounds::plain(1, MAX_BATCH);
pub(crate) const SEQ: Bounds = Bounds::tokens(1, MAX_SEQ);
pub(crate) const NEW_TOKENS: Bounds = Bounds::tokens(0, MAX_SEQ);
pub(crate) const GPUS: Bounds = Bounds::plain(1, MAX_GPUS as u64);
pub(crate) const LORA_RANK: Bounds = Bounds::plain(1, 16_384);
/// vLLM's `max_num_batched_tokens`: one token per step up to the longest context.
pub(crate) const BATCHED_TOKENS: Bounds = Bounds::tokens(1, MAX_SEQ);
pub(crate) const BLOCK_SIZE: Bounds = Bounds::plain(1, 1024);
/// Layers llama.cpp can offload: 0 (everything on the CPU) up to far more than any
/// model has; more than the model's layers means all of them.
pub(crate) const GPU_LAYERS: Bounds = Bounds::plain(0, 1024);
/// `--cpu-moe`: the routed experts of every layer in CPU RAM.
pub const CPU_MOE_ALL: u32 = u32::MAX;
/// `-ngl all`: every layer and the output on the GPU, whatever the memory.
pub const GPU_LAYERS_ALL: u32 = u32::MAX;
/// RAM bandwidth in GB/s: from a laptop's single channel of DDR4 to many-channel
/// servers and unified memory, with room to spare.
pub(crate) const RAM_GBS: Bounds = Bounds::plain(1, 10_000);
/// llama.cpp's `n_ubatch`: at least one token, at most its largest `n_batch` in practice.
pub(crate) const UBATCH: Bounds = Bounds::plain(1, 65_536);
/// The whole card, in the basis points [`Settings::utilization`] counts.
pub const BASIS_POINTS: u16 = 10_000;
/// vLLM accepts a utilisation in (0, 1]; below 5 % nothing useful fits.
pub(crate) const UTILIZATION: (u16, u16) = (500, BASIS_POINTS);

/// A utilisation in basis points as a Spanish percentage: "90", "97,64".
pub fn percent_text(bp: u16) -> String {
    let (whole, hundredths) = (bp / 100, bp % 100);
    match hundredths {
        0 => whole.to_string(),
        h if h.is_multiple_of(10) => format!("{whole},{}", h / 10),
        h => format!("{whole},{h:02}"),
    }
}

impl Settings {
    /// The defaults of `task` with its usual runtime, without a GPU.
    pub fn for_task(task: Task) -> Settings {
        Settings::defaults(task, Runtime::default_for(task))
    }

    /// What users of `runtime` get for `task` when they change nothing:
    ///
    /// - QLoRA loads the base in NF4 with double quantisation, as the QLoRA paper and
    ///   its notebooks do (`bnb_4bit_use_double_quant=True`).
    /// - Training turns gradient checkpointing on: TRL's `SFTConfig` defaults to
    ///   `gradient_checkpointing=True` (trl/trainer/sft_config.py), PEFT's
    ///   `prepare_model_for_kbit_training` enables it for quantised bases, and
    ///   torchtune's single-device configs set `enable_activation_checkpointing`.
    /// - A full fine-tune with transformers 5 trains the checkpoint in its own dtype,
    ///   pure bf16 for a bf16 checkpoint (`--precision amp` is transformers 4's
    ///   autocast over fp32 weights); DeepSpeed keeps 16-bit weights with an fp32
    ///   master copy; torchtune and Unsloth train in pure bf16.
    /// - The loss: transformers computes it over the whole logits in fp32
    ///   (`ForCausalLMLoss`), torchtune in 8 chunks of the output
    ///   (`CEWithChunkedOutputLoss`), Unsloth fused with the projection.
    /// - LoRA goes on `q_proj` and `v_proj` with PEFT's defaults, on q, v, the output
    ///   projection and the MLP in torchtune's configs ([`LoraTargets::TORCHTUNE`]), on
    ///   every linear in Unsloth's notebooks.
    /// - vLLM serves: the paged KV cache at `gpu_memory_utilization=0.9`.
    /// - vLLM, llama.cpp and Ollama open the context they choose when launched without
    ///   one (`auto`, [`crate::default_context`]); the others get 4096 tokens.
    pub fn defaults(task: Task, runtime: Runtime) -> Settings {
        let training = task.is_training();
        Settings {
            gpu: None,
            gpu_memory: None,
            reserve: 0,
            task,
            runtime,
            format: match (task, runtime) {
                (Task::Qlora, _) => WeightFormat::Nf4 { double_quant: true },
                // AutoAWQ runs AWQ checkpoints: 4 bits, groups of 128.
                (_, Runtime::AutoAwq) => WeightFormat::GroupQuant {
                    bits: 4,
                    group: 128,
                },
                // What the runtime makes of the checkpoint ([`Settings::weights_for`]).
                _ => WeightFormat::Checkpoint,
            },
            batch: 1,
            // The servers choose a context themselves; the rest take the user's.
            seq: if !training && crate::default_context::opens_context(runtime) {
                None
            } else {
                Some(DEFAULT_SEQ)
            },
            new_tokens: 0,
            // llama.cpp turns flash attention on when the GPU supports it (`-fa auto`),
            // and Ollama asks llama-server for that since 0.30 (`--flash-attn auto` in
            // llm/llama_server.go; gemma3, qwen3 and gpt-oss had it on since 0.12).
            attention: match runtime {
                Runtime::LlamaCpp | Runtime::Ollama => Attention::Flash,
                _ => Attention::Sdpa,
            },
            checkpointing: training,
            optimizer: Optimizer::Adamw,
            precision: match runtime {
                // transformers 5 loads a checkpoint in its own dtype (`dtype="auto"`,
                // huggingface/transformers PR 42805): `Trainer(bf16=True)` then trains a
                // bf16 checkpoint in bf16, AdamW's states included. LoRA keeps PEFT's
                // fp32 adapters under autocast.
                Runtime::Transformers if task == Task::Full => Precision::Pure,
                Runtime::Transformers => Precision::Amp,
                Runtime::Deepspeed => Precision::Master,
                Runtime::Unsloth
                | Runtime::Torchtune
                | Runtime::Vllm
                | Runtime::LlamaCpp
                | Runtime::Ollama
                | Runtime::AutoAwq => Precision::Pure,
            },
            loss: match runtime {
                Runtime::Torchtune => Loss::ChunkedOutput { chunks: 8 },
                Runtime::Unsloth => Loss::Fused,
                Runtime::Transformers
                | Runtime::Deepspeed
                | Runtime::Vllm
                | Runtime::LlamaCpp
                | Runtime::Ollama
                | Runtime::AutoAwq => Loss::Full,
            },
            lora_rank: 16,
            lora_targets: match runtime {
                Runtime::Unsloth => LoraTargets::AllLinear,
                Runtime::Torchtune => LoraTargets::TORCHTUNE,
                _ => LoraTargets::QUERY_VALUE,
            },
            kv_dtype: KvDtype::Auto,
            gpus: 1,
            zero: 0,
            tp: None,
            pp: 1,
            cpu_offload: false,
            offload_params: false,
            serve: runtime == Runtime::Vllm,
            utilization: 9000,
            batched_tokens: None,
            max_seqs: None,
            cuda_graphs: CudaGraphs::Profiled,
            block_size: 16,
            cuda_context: None,
            gpu_layers: None,
            ubatch: crate::workload::GGML_UBATCH,
            cpu_moe: 0,
            ram_gbs: crate::speed::DEFAULT_RAM_GBS,
            mmproj: runtime == Runtime::Ollama,
            slots: None,
            ngl_output_first: true,
        }
    }

    /// What a web surface shows first: inference on the site's default GPU.
    pub fn web_default() -> Settings {
        Settings {
            gpu: crate::catalog::gpu(WEB_GPU),
            ..Settings::for_task(Task::Inference)
        }
    }

    /// Switches to `task`: each setting still at the old defaults takes the new task's
    /// default; the ones the user changed stay. The runtime follows the task when it
    /// was the old task's usual one or cannot run the new task.
    pub fn with_task(&self, task: Task) -> Settings {
        let runtime = if self.runtime == Runtime::default_for(self.task) || !self.runtime.runs(task)
        {
            Runtime::default_for(task)
        } else {
            self.runtime
        };
        self.moved_to(task, runtime)
    }

    /// Switches to `runtime`, moving the settings still at the old runtime's defaults.
    pub fn with_runtime(&self, runtime: Runtime) -> Settings {
        self.moved_to(self.task, runtime)
    }

    fn moved_to(&self, task: Task, runtime: Runtime) -> Settings {
        let old = Settings::defaults(self.task, self.runtime);
        let new = Settings::defaults(task, runtime);
        let mut out = self.clone();
        out.task = task;
        out.runtime = runtime;
        for &f in Field::ALL {
            if !matches!(f, Field::Task | Field::Runtime) && value::same(self, &old, f) {
                value::copy(&mut out, &new, f);
            }
        }
        out
    }

    /// The base these settings are compared with when printed: `base` switched to
    /// this task and runtime.
    fn reference(&self, base: &Settings) -> Settings {
        base.with_task(self.task).with_runtime(self.runtime)
    }

    /// Reads settings by their web keys (a link's query, a widget's attributes, a
    /// shortcode's attributes) on top of `base`. Absent and empty values keep the base
    /// (moved to the task read); a bad value keeps it too, and is reported.
    pub fn read(
        base: &Settings,
        get: impl Fn(&str) -> Option<String>,
    ) -> (Settings, Vec<SettingError>) {
        Settings::read_with(base, Surface::Web, |spec| get(spec.key))
    }

    /// [`Settings::read`] for any surface: `get` returns a field's text by its spec.
    pub fn read_with(
        base: &Settings,
        surface: Surface,
        get: impl Fn(&Spec) -> Option<String>,
    ) -> (Settings, Vec<SettingError>) {
        let mut errors = Vec::new();
        let value = |f: Field| get(f.spec()).filter(|v| !v.trim().is_empty());
        let mut s = base.clone();
        // The task, then the runtime, move the defaults the other settings start from.
        for f in [Field::Task, Field::Runtime] {
            if let Some(text) = value(f) {
                let mut probe = s.clone();
                match probe.set(f, &text, surface) {
                    Ok(()) if f == Field::Task => s = s.with_task(probe.task),
                    Ok(()) => s = s.with_runtime(probe.runtime),
                    Err(e) => errors.push(e),
                }
            }
        }
        for &f in Field::ALL
            .iter()
            .filter(|&&f| !matches!(f, Field::Task | Field::Runtime))
        {
            if let Some(text) = value(f)
                && let Err(e) = s.set(f, &text, surface)
            {
                errors.push(e);
            }
        }
        (s, errors)
    }

    /// The web (key, value) pairs that describe these settings on top of `base`:
    /// the core fields always (a link says what it shows even if defaults change),
    /// the others when they differ from the task's default.
    pub fn pairs(&self, base: &Settings) -> Vec<(&'static str, String)> {
        let by_task = base.with_task(self.task);
        let reference = self.reference(base);
        Field::ALL
            .iter()
            .filter(|&&f| {
                f.spec().core
                    || match f {
                        Field::Runtime => self.runtime != by_task.runtime,
                        _ => !value::same(self, &reference, f),
                    }
            })
            .filter_map(|&f| self.text(f, Surface::Web).map(|v| (f.spec().key, v)))
            .collect()
    }

    /// Reads a link's query string (`"?gpu=l4&contexto=8k"` or without the `?`), as
    /// [`Settings::read`] does. Also returns the other keys' values, by key, for the
    /// surface to read (the model, an imported architecture…).
    pub fn from_query(
        base: &Settings,
        query: &str,
    ) -> (Settings, Vec<SettingError>, Vec<(String, String)>) {
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
        let (s, errors) = Settings::read(base, |k| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        });
        let rest = pairs
            .into_iter()
            .filter(|(k, _)| Field::by_key(k).is_none())
            .collect();
        (s, errors, rest)
    }

    /// The query string (without `?`) of [`Settings::pairs`], after `extra` pairs
    /// (the model first, say) and before `tail` (an imported model's keys).
    pub fn to_query(
        &self,
        base: &Settings,
        extra: &[(&str, &str)],
        tail: &[(&str, &str)],
    ) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.extend_pairs(extra.iter().copied());
        for (k, v) in self.pairs(base) {
            q.append_pair(k, &v);
        }
        q.extend_pairs(tail.iter().copied());
        q.finish()
    }

    /// The `vramlab estimate` flags that give these settings: those that differ from
    /// the CLI's defaults.
    pub fn cli_args(&self) -> Vec<String> {
        let reference = Settings::defaults(self.task, self.runtime);
        let mut args = Vec::new();
        for &f in Field::ALL {
            let differs = (f == Field::Task && self.task != Task::Inference)
                || (f == Field::Runtime && self.runtime != Runtime::default_for(self.task))
                || !value::same(self, &reference, f);
            if differs && let Some(v) = self.text(f, Surface::Cli) {
                args.push(format!("--{}", f.cli()));
                args.push(v);
            }
        }
        args
    }

    /// This setting's value as `surface` writes it; `None` when unset (no GPU,
    /// automatic tensor parallelism, the family's CUDA context).
    pub fn text(&self, f: Field, surface: Surface) -> Option<String> {
        value::text(self, f, surface)
    }

    /// Sets one field from text, as any surface may spell it.
    pub fn set(&mut self, f: Field, input: &str, surface: Surface) -> Result<(), SettingError> {
        value::set(self, f, input, surface)
    }

    /// The memory of one whole GPU as a process sees it: the memory given, else what
    /// the catalog GPU's driver reports to PyTorch.
    pub fn card_memory(&self) -> Option<u64> {
        self.gpu_memory.or(self.gpu.map(|g| g.usable_bytes))
    }

    /// The memory one GPU gives a process: [`Settings::card_memory`] less what the
    /// display and other processes hold.
    pub fn capacity(&self) -> Option<u64> {
        self.card_memory().map(|c| c.saturating_sub(self.reserve))
    }

    /// The CUDA context a process holds as it starts, before lazily loaded kernels: the
    /// one given, else the catalog GPU family's initial one, else the generic one.
    pub fn start_context(&self) -> u64 {
        self.cuda_context.unwrap_or_else(|| {
            self.gpu.map_or(crate::context::GENERIC.initial, |g| {
                crate::context::for_family(&g.family).initial
            })
        })
    }

    /// With `auto` context, the one the runtime opens a model trained on `trained`
    /// tokens with on these GPUs; `None` when the context is given.
    pub fn opened(&self, trained: Option<u64>) -> Option<Opened> {
        // A forged config cannot make the context longer than the engine estimates.
        let trained = trained.map(|t| t.min(MAX_SEQ));
        self.seq
            .is_none()
            .then(|| default_context::opened(self.runtime, trained, self.total_vram()))
    }

    /// The memory of one GPU as nvidia-smi reports it: the memory given, else the
    /// catalog GPU's nominal total (what vLLM and Ollama size by).
    pub fn card_total(&self) -> Option<u64> {
        self.gpu_memory.or(self.gpu.map(|g| g.memory_bytes))
    }

    /// The memory of all the GPUs together, as their drivers report it (what Ollama
    /// chooses its context by); `None` without a GPU.
    pub fn total_vram(&self) -> Option<u64> {
        self.card_total()
            .map(|per_gpu| per_gpu.saturating_mul(u64::from(self.gpus.max(1))))
    }

    /// The prompt tokens: the ones given, or what the `opened` context leaves after the
    /// generated tokens.
    pub fn prompt(&self, opened: Option<Opened>) -> u64 {
        self.seq.unwrap_or_else(|| {
            opened
                .map_or(default_context::FALLBACK, Opened::tokens)
                .saturating_sub(self.new_tokens)
                .clamp(1, MAX_SEQ)
        })
    }

    /// Whether a paged-KV server is planned: `serve` for inference on a runtime that
    /// pages its cache. llama.cpp and Ollama reserve theirs whole when they load (their
    /// slots are the batch), and AutoAWQ is a library, so `serve` means nothing there.
    pub fn serving(&self) -> bool {
        self.serve
            && !self.task.is_training()
            && !matches!(
                self.runtime,
                Runtime::LlamaCpp | Runtime::Ollama | Runtime::AutoAwq
            )
    }

    /// Whether the runtime splits the model over its GPUs by whole layers (llama.cpp
    /// and Ollama in inference) instead of tensor parallelism.
    pub fn layer_split(&self) -> bool {
        matches!(self.runtime, Runtime::LlamaCpp | Runtime::Ollama) && !self.task.is_training()
    }

    /// The format the engine holds the weights in when the checkpoint stores them as
    /// `stored` (`None`: 16-bit). `auto` is what each runtime does with the checkpoint
    /// by default:
    ///
    /// - vLLM and transformers 5 (`dtype="auto"`) load it as it is stored: MXFP4
    ///   experts stay MXFP4 (vLLM's `Mxfp4MoEMethod`; transformers' `Mxfp4HfQuantizer`
    ///   with triton ≥ 3.4 and `kernels`), FP8 and NVFP4 stay so. transformers
    ///   dequantises MXFP4 to bf16 on GPUs below compute capability 7.5 (Pascal,
    ///   Volta): "We will default to dequantizing the model to bf16".
    /// - Training runs on bf16 weights ([`WeightFormat::resolved`]).
    /// - llama.cpp and Ollama run a GGUF: gpt-oss is published as MXFP4_MOE (what
    ///   `ollama pull gpt-oss` and ggml-org's files hold), everything else as Q4_K_M,
    ///   the quantisation Ollama pulls by default and most GGUF users pick. An explicit
    ///   `mxfp4` there is that same MXFP4_MOE file type.
    pub fn weights_for(&self, stored: Option<WeightFormat>) -> WeightFormat {
        let ggml = matches!(self.runtime, Runtime::LlamaCpp | Runtime::Ollama);
        match self.format {
            WeightFormat::Checkpoint if ggml => match stored {
                Some(WeightFormat::Mxfp4) => WeightFormat::Mxfp4Moe,
                _ => WeightFormat::parse("Q4_K_M").unwrap_or(WeightFormat::Checkpoint),
            },
            WeightFormat::Mxfp4 if ggml => WeightFormat::Mxfp4Moe,
            WeightFormat::Checkpoint => {
                let old_gpu = self
                    .gpu
                    .as_ref()
                    .is_some_and(|g| matches!(g.family.as_str(), "pascal" | "volta"));
                match WeightFormat::Checkpoint.resolved(stored, self.task.is_training()) {
                    WeightFormat::Mxfp4 if old_gpu && self.runtime != Runtime::Vllm => {
                        WeightFormat::Plain { dtype: Dtype::Bf16 }
                    }
                    f => f,
                }
            }
            f => f,
        }
    }

    /// Whether the runtime runs on `gpu` at all: on Apple Silicon only the ggml
    /// runtimes (Metal) and transformers (PyTorch's MPS) do; vLLM, DeepSpeed, Unsloth,
    /// torchtune's CUDA recipes and AutoAWQ need CUDA or ROCm.
    pub fn runs_on(&self, gpu: &crate::catalog::Gpu) -> bool {
        gpu.family != "apple"
            || matches!(
                self.runtime,
                Runtime::LlamaCpp | Runtime::Ollama | Runtime::Transformers
            )
    }

    /// The tensor-parallel degree in effect.
    pub fn tp(&self) -> u32 {
        self.tp.unwrap_or(if self.task.is_training() {
            1
        } else {
            self.gpus
        })
    }

    /// The ZeRO stage the training runs at (0 in inference). torchtune has no DDP: its
    /// distributed recipes always shard with FSDP2, resharding after forward (ZeRO-3) by
    /// default and keeping the gathered parameters until backward (ZeRO-2) with
    /// `fsdp_reshard_after_forward: False` (the docstring of
    /// `recipes/full_finetune_distributed.py`: "DDP is currently not supported"), so on
    /// several GPUs stages 0 and 1 run as 3.
    pub fn zero_stage(&self) -> u8 {
        if !self.task.is_training() {
            0
        } else if self.fsdp_forced() {
            3
        } else {
            self.zero
        }
    }

    /// Whether the runtime shards with FSDP where the stage asked for would not:
    /// torchtune training on several GPUs at stage 0 or 1 ([`Settings::zero_stage`]).
    pub fn fsdp_forced(&self) -> bool {
        self.task.is_training()
            && self.runtime == Runtime::Torchtune
            && self.gpus > 1
            && self.zero < 2
    }

    /// The engine's workload. The CUDA context is the one given, else the catalog
    /// GPU family's default, else the engine's generic one.
    pub fn workload(&self) -> Workload {
        let training = self.task.is_training();
        Workload {
            mode: if training {
                Mode::Train
            } else {
                Mode::Inference
            },
            finetune: self
                .task
                .finetune()
                .unwrap_or(crate::workload::Finetune::Full),
            weights: self.weights_for(None),
            precision: self.precision,
            loss: self.loss,
            lora_targets: self.lora_targets,
            checkpoint_offload: training && self.checkpointing && self.runtime == Runtime::Unsloth,
            optimizer: self.optimizer,
            batch: self.batch,
            seq: self.prompt(self.opened(None)),
            new_tokens: self.new_tokens,
            grad_checkpointing: training && self.checkpointing,
            attention: self.attention,
            lora_rank: self.lora_rank,
            kv_dtype: self.kv_dtype,
            gpus: self.gpus,
            zero: self.zero_stage(),
            // ZeRO-3 outside DeepSpeed is PyTorch's FSDP (Trainer through accelerate,
            // torchtune, torchrun scripts).
            fsdp: self.zero_stage() >= 3 && self.runtime != Runtime::Deepspeed,
            // llama.cpp and Ollama deal whole layers among the GPUs (`--split-mode
            // layer`, their default): a pipeline over every GPU.
            tp: if self.layer_split() { 1 } else { self.tp() },
            pp: if self.layer_split() {
                self.gpus
            } else {
                self.pp
            },
            // Parameters in RAM take the optimizer and the gradients with them: DeepSpeed
            // pairs `offload_param` with `offload_optimizer` (its estimator models
            // nothing else), FSDP's CPU offload moves all three.
            cpu_offload: training
                && (self.cpu_offload || self.offload_params && self.zero_stage() >= 3),
            offload_params: training && self.offload_params && self.zero_stage() >= 3,
            cuda_context: self.cuda_context.or(self
                .gpu
                .map(|g| crate::context::for_family(&g.family).bytes)),
            stored_weights: None,
            stored_experts: Vec::new(),
            deepspeed: training && self.runtime == Runtime::Deepspeed,
            fused_layers: training && self.runtime == Runtime::Unsloth,
            // TRL skips the k-bit preparation when the 4-bit base is sharded ("one
            // should never call peft_module_casting_to_bf16 or
            // prepare_model_for_kbit_training when doing QLoRA + FSDP / DS-Zero3",
            // `is_sharded_qlora` in trl/trainer/sft_trainer.py).
            kbit_fp32: self.task == Task::Qlora
                && self.runtime == Runtime::Transformers
                && (self.zero_stage() < 3 || self.gpus <= 1),
            gpu_layers: self.gpu_layers,
            ngl_output_first: self.ngl_output_first,
            ubatch: u64::from(self.ubatch),
            // llama-server leaves `-np` at `auto`: four slots over one pool. A batch is
            // `-np N`, separate streams; Ollama always passes `-np`.
            shared_slots: match self.slots {
                Some(n) => n,
                None if self.runtime == Runtime::LlamaCpp && self.batch == 1 => {
                    crate::estimate::ggml::LLAMA_SERVER_AUTO_SLOTS
                }
                None => 0,
            },
            cpu_moe: self.cpu_moe,
            mmproj: self.mmproj,
            ram_gbs: self.ram_gbs,
            // ggml has no PyTorch matmuls; a vLLM server's start-up profile counts its
            // workspace itself (`serving::Profile::blas_workspace`).
            blas_workspace: match (self.runtime, training) {
                (Runtime::LlamaCpp | Runtime::Ollama, false) => 0,
                (Runtime::Vllm, false) if self.serve => 0,
                _ => {
                    let handles = if training { 2 } else { 1 };
                    handles * crate::context::cublas_workspace(self.gpu.map(|g| g.family.as_str()))
                }
            },
            engine: match self.runtime {
                Runtime::LlamaCpp | Runtime::Ollama if !training => Engine::Ggml,
                Runtime::AutoAwq if !training => Engine::AwqFused,
                _ => Engine::Torch,
            },
        }
    }
}

/// "a, b, c o d".
pub(crate) fn or_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} o {last}", init.join(", ")),
    }
}

/// Test fixture: inference defaults with `flags` (the CLI's names and values) set, or
/// the settings that refused them.
#[cfg(test)]
pub(crate) fn from_cli_flags(flags: &[(&str, &str)]) -> Result<Settings, Vec<SettingError>> {
    let (s, errors) =
        Settings::read_with(&Settings::for_task(Task::Inference), Surface::Cli, |spec| {
            flags
                .iter()
                .find(|(k, _)| *k == spec.field.cli())
                .map(|(_, v)| (*v).to_owned())
        });
    if errors.is_empty() {
        Ok(s)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests;
