//! The estimator's pure half: the reader's inputs, typed through `vram::settings`, the
//! link they make, and (on the server) the answer for them: one `vram::Evaluation`,
//! through `estimate_web::view`, which the browser runs in that crate's bundle. No
//! Leptos here, so the tests exercise exactly what the island sends.

use vram::settings::{SettingError, Task};
use vram::{Field, Settings, Surface};

pub use estimate_web::view::CUSTOM;
#[cfg(not(target_arch = "wasm32"))]
pub use estimate_web::view::Outcome;
/// What the page holds of an import: the architecture as `vram::share` text, which
/// only the engine's bundle decodes.
pub type Imported = vram::import::Imported<vram::share::ArchText>;

/// The settings the reader types as text: a bad value keeps the last good one in the
/// settings and shows its message under the field.
pub const TEXT_FIELDS: [Field; 10] = [
    Field::Batch,
    Field::Seq,
    Field::Gpus,
    Field::Reserve,
    Field::Utilization,
    Field::GpuLayers,
    Field::CpuMoe,
    Field::Ubatch,
    Field::RamBandwidth,
    Field::LoraTargets,
];

/// The reader's inputs: the model, the typed settings, and the text fields as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// A catalog id, or [`CUSTOM`].
    pub model: String,
    pub settings: Settings,
    /// Text of the [`TEXT_FIELDS`] the reader edited, exactly as typed ("4k" stays
    /// "4k"); the others show the settings' own spelling.
    typed: Vec<(Field, String)>,
}

impl Inputs {
    pub fn new(model: String, settings: Settings) -> Self {
        Inputs {
            model,
            settings,
            typed: Vec::new(),
        }
    }

    pub fn is_training(&self) -> bool {
        self.settings.task.is_training()
    }

    /// What a text field shows.
    pub fn text(&self, f: Field) -> String {
        self.typed
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, t)| t.clone())
            .or_else(|| self.settings.text(f, Surface::Web))
            .unwrap_or_default()
    }

    /// What the reader typed in field `f`, if anything.
    pub fn typed(&self, f: Field) -> Option<String> {
        self.typed
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, t)| t.clone())
    }

    /// Forgets what the reader typed in field `f`: the settings' value shows.
    pub fn forget(&mut self, f: Field) {
        self.typed.retain(|(g, _)| *g != f);
    }

    /// Why a text field's text is refused, if it is.
    pub fn error(&self, f: Field) -> Option<SettingError> {
        let (_, text) = self.typed.iter().find(|(g, _)| *g == f)?;
        self.settings.clone().set(f, text, Surface::Web).err()
    }

    /// The first refused text field's reason: the page shows it instead of an answer.
    /// The LoRA list counts only where LoRA trains (elsewhere its field is disabled).
    pub fn first_error(&self) -> Option<SettingError> {
        let lora = matches!(self.settings.task, Task::Lora | Task::Qlora);
        TEXT_FIELDS
            .iter()
            .filter(|&&f| lora || f != Field::LoraTargets)
            .find_map(|&f| self.error(f))
    }

    /// The reader typed `text` in field `f` (a list of LoRA modules can be long).
    pub fn type_text(&mut self, f: Field, text: String) {
        let text: String = text.chars().take(128).collect();
        let _ = self.settings.set(f, &text, Surface::Web);
        self.typed.retain(|(g, _)| *g != f);
        self.typed.push((f, text));
    }

    /// The reader chose `value` in a select or a checkbox. A new task moves the
    /// settings still at the old task's defaults to the new one's (QLoRA: NF4 and
    /// checkpointing), so the form shows what is computed.
    pub fn choose(&mut self, f: Field, value: &str) {
        if f == Field::Task {
            if let Some(task) = vram::settings::find(vram::settings::TASKS, value) {
                self.settings = self.settings.with_task(task);
            }
        } else if f == Field::Runtime {
            if let Some(r) = vram::settings::find(vram::settings::RUNTIMES, value)
                && r.runs(self.settings.task)
            {
                self.settings = self.settings.with_runtime(r);
            }
        } else {
            // The page's own options are valid; anything else keeps the value.
            let _ = self.settings.set(f, value, Surface::Web);
        }
        // A choice replaces what was typed for the same setting, and a new task or
        // runtime what it moved to its own default (typed text that still reads as
        // the value stays, and so does refused text, with its message).
        self.forget(f);
        let settings = &self.settings;
        self.typed.retain(|(g, text)| {
            let mut read = settings.clone();
            read.set(*g, text, Surface::Web).is_err()
                || read.text(*g, Surface::Web) == settings.text(*g, Surface::Web)
        });
    }

    /// The link's (key, value) pairs for these inputs and what was imported: what the
    /// address carries and what the bundle reads (`estimate_web::view::read_link`).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn link_pairs(&self, imported: &Imported) -> Vec<(&'static str, String)> {
        estimate_web::view::link_pairs(&self.model, &self.settings, imported)
    }
}

/// The answer for a set of inputs, computed here on the server (the first answer, and
/// the tests); the browser asks the `estimate-web` bundle for the same function's answer.
#[cfg(not(target_arch = "wasm32"))]
pub fn compute(i: &Inputs, imported: &Imported) -> Result<Outcome, String> {
    if let Some(e) = i.first_error() {
        return Err(e.to_string());
    }
    let arch = match &imported.arch {
        Some((text, summary)) => Some((
            vram::share::decode(&text.0).map_err(|e| e.to_string())?,
            summary.clone(),
        )),
        None => None,
    };
    let decoded = vram::import::Imported {
        arch,
        weights: imported.weights.clone(),
    };
    estimate_web::view::evaluate(&i.model, &i.settings, &decoded)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use vram::import::StoredWeights;
    use vram::{Note, Verdict, catalog};

    fn inputs() -> Inputs {
        Inputs::new("llama-3.1-8b".into(), Settings::web_default())
    }

    #[test]
    fn computes_what_the_cli_computes() {
        let o = compute(&inputs(), &Imported::default()).unwrap();
        assert_eq!(o.eval.estimate.breakdown.weights, 16_060_522_496);
        assert!(o.eval.max_batch.is_some());
        assert!(
            o.eval
                .notes
                .iter()
                .any(|n| matches!(n, Note::CudaContext { .. })),
            "{:?}",
            o.eval.notes
        );
        // The GPU's family sets the CUDA context: Hopper 1384 MiB (measured on an H200),
        // Ada 500 MiB. The rest of the overhead, the allocator's 5 % margin, grows only
        // with Hopper's larger cuBLAS workspace (32 MiB against 8.1 MiB).
        let mut h100 = inputs();
        h100.choose(Field::Gpu, "h100-sxm");
        let h = compute(&h100, &Imported::default()).unwrap();
        let more = h.eval.estimate.breakdown.overhead - o.eval.estimate.breakdown.overhead;
        let mib = vram::ByteSize::MIB;
        assert!((884 * mib..885 * mib + mib / 4).contains(&more), "{more}");
    }

    /// A typed LoRA list sets the targets; a bad one blocks the answer only where LoRA
    /// trains, and a new runtime that moves the targets to its own default drops it.
    #[test]
    fn typed_lora_lists() {
        let mut i = inputs();
        i.choose(Field::Task, "lora");
        let qv = compute(&i, &Imported::default()).unwrap();
        i.type_text(Field::LoraTargets, "q_proj,k_proj,v_proj".into());
        let qkv = compute(&i, &Imported::default()).unwrap();
        assert!(qkv.eval.estimate.trainable_params > qv.eval.estimate.trainable_params);
        i.type_text(Field::LoraTargets, "q_proj,lm_head".into());
        assert!(compute(&i, &Imported::default()).is_err());
        i.choose(Field::Task, "entrenamiento");
        assert!(compute(&i, &Imported::default()).is_ok());
        i.choose(Field::Task, "lora");
        i.type_text(Field::LoraTargets, "v_proj,q_proj".into());
        assert_eq!(i.text(Field::LoraTargets), "v_proj,q_proj");
        i.choose(Field::Runtime, "torchtune");
        assert_eq!(i.typed(Field::LoraTargets), None);
        assert_eq!(i.text(Field::LoraTargets), "qvo-mlp");
    }

    #[test]
    fn several_gpus_shard_training_and_split_inference() {
        let mut i = inputs();
        i.model = "llama-3.1-70b".into();
        i.choose(Field::Gpu, "h100-sxm");
        let one = compute(&i, &Imported::default()).unwrap();
        i.type_text(Field::Gpus, "4".into());
        let four = compute(&i, &Imported::default()).unwrap();
        // Tensor parallelism splits the weights four ways.
        let w = |o: &Outcome| o.eval.estimate.breakdown.weights;
        assert_eq!(w(&four), w(&one).div_ceil(4));
        assert_eq!(four.eval.estimate.gpus, 4);
        i.choose(Field::Task, "entrenamiento");
        let ddp = compute(&i, &Imported::default()).unwrap();
        i.choose(Field::Zero, "3");
        let zero3 = compute(&i, &Imported::default()).unwrap();
        let per = |o: &Outcome| o.eval.estimate.per_gpu_bytes;
        assert!(
            per(&zero3) < per(&ddp) / 3,
            "{} vs {}",
            per(&zero3),
            per(&ddp)
        );
        i.type_text(Field::Gpus, "0".into());
        let e = compute(&i, &Imported::default()).unwrap_err();
        assert!(
            e.starts_with("El número de GPU debe ser un entero entre 1 y"),
            "{e}"
        );
    }

    #[test]
    fn serving_verdict_counts_sequences() {
        let mut i = inputs();
        i.choose(Field::Serve, "si");
        let o = compute(&i, &Imported::default()).unwrap();
        assert_eq!(o.eval.serving.unwrap().kv_bytes_per_token, 131_072);
        assert!(matches!(o.eval.verdict, Some(Verdict::Serves { sequences, .. }) if sequences > 0));
        i.choose(Field::Task, "lora");
        assert!(
            compute(&i, &Imported::default())
                .unwrap()
                .eval
                .serving
                .is_none()
        );
    }

    #[test]
    fn runtime_and_reserve() {
        let mut i = inputs();
        // vLLM is a server: choosing it turns serving on.
        i.choose(Field::Runtime, "vllm");
        assert!(i.settings.serve);
        assert!(
            compute(&i, &Imported::default())
                .unwrap()
                .eval
                .serving
                .is_some()
        );
        // A training runtime cannot run inference: the choice is ignored.
        i.choose(Field::Runtime, "unsloth");
        assert_eq!(i.settings.runtime, vram::settings::Runtime::Vllm);
        i.choose(Field::Task, "qlora");
        i.choose(Field::Runtime, "unsloth");
        assert_eq!(i.settings.runtime, vram::settings::Runtime::Unsloth);
        // What other processes hold comes off the GPU.
        let before = compute(&i, &Imported::default())
            .unwrap()
            .eval
            .capacity
            .unwrap();
        i.type_text(Field::Reserve, "1 GiB".into());
        let after = compute(&i, &Imported::default())
            .unwrap()
            .eval
            .capacity
            .unwrap();
        assert_eq!(before - after, 1 << 30);
        i.type_text(Field::Reserve, "mucho".into());
        assert!(compute(&i, &Imported::default()).is_err());
    }

    #[test]
    fn qlora_shows_the_format_it_computes() {
        let mut i = inputs();
        i.choose(Field::Task, "qlora");
        assert_eq!(i.settings.format.id(), "nf4-dq");
        assert!(i.settings.checkpointing);
        let picked = compute(&i, &Imported::default()).unwrap();
        // Choosing NF4 with double quantisation by hand gives the same number.
        i.choose(Field::Format, "nf4-dq");
        assert_eq!(compute(&i, &Imported::default()).unwrap(), picked);
    }

    #[test]
    fn imported_architecture_is_used() {
        let mut i = inputs();
        i.model = CUSTOM.into();
        let gpt2 = catalog::model("gpt2").unwrap().arch.clone();
        let imported = Imported {
            arch: Some((
                vram::share::ArchText(vram::share::encode(&gpt2)),
                String::new(),
            )),
            weights: None,
        };
        let w = |o: Outcome| o.eval.estimate.breakdown.weights;
        assert_eq!(w(compute(&i, &imported).unwrap()), 2 * 124_439_808);
        // Exact weights from a file replace the formula in inference, not in training.
        let exact = Imported {
            weights: Some(StoredWeights {
                bytes: 99_000_000,
                params: Some(124_439_808),
                source: "gpt2.gguf".into(),
                experts: Vec::new(),
                shard: None,
            }),
            ..imported
        };
        assert_eq!(w(compute(&i, &exact).unwrap()), 99_000_000);
        i.choose(Field::Task, "entrenamiento");
        let train = compute(&i, &exact).unwrap();
        assert!(
            train
                .eval
                .notes
                .iter()
                .any(|n| n.text(Surface::Web).contains("solo valen para inferencia"))
        );
        // transformers 5 trains the checkpoint's bf16 weights as they are.
        assert_eq!(w(train), 2 * 124_439_808);
        i.choose(Field::Task, "inferencia");
        // Without an import, "propio" is a clear message, not a panic.
        assert!(
            compute(&i, &Imported::default())
                .unwrap_err()
                .contains("config.json")
        );
    }

    #[test]
    fn bad_text_names_the_field_and_keeps_the_last_good_value() {
        type Edit = fn(&mut Inputs);
        let cases: [(Edit, &str); 4] = [
            (
                |i| i.type_text(Field::Batch, "cero".into()),
                "El lote debe ser",
            ),
            (|i| i.type_text(Field::Batch, "-4".into()), "«-4» no lo es"),
            (
                |i| i.type_text(Field::Seq, "0".into()),
                "El contexto debe ser auto (vLLM, llama.cpp, Ollama) o un entero entre 1 y",
            ),
            (|i| i.model = "x".into(), "modelo"),
        ];
        for (edit, want) in cases {
            let mut i = inputs();
            edit(&mut i);
            let e = compute(&i, &Imported::default()).unwrap_err();
            assert!(e.contains(want), "{e}");
            assert_eq!(i.settings.batch, 1);
        }
        let mut i = inputs();
        i.type_text(Field::Seq, "8k".into());
        assert_eq!(
            (i.settings.seq, i.text(Field::Seq)),
            (Some(8192), "8k".to_owned())
        );
    }

    #[test]
    fn the_link_reads_back() {
        let mut i = inputs();
        i.choose(Field::Task, "qlora");
        i.type_text(Field::Seq, "8k".into());
        let pairs = i.link_pairs(&Imported::default());
        assert_eq!(
            pairs[..3],
            [
                ("modelo", "llama-3.1-8b".to_owned()),
                ("gpu", "rtx-4090".into()),
                ("modo", "qlora".into())
            ]
        );
        let (s, errors) = Settings::read(&Settings::web_default(), |k| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.clone())
        });
        assert!(errors.is_empty());
        assert_eq!(s, i.settings);
    }
}
