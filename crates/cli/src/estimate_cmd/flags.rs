//! The estimate's settings as flags, generated from `vram::settings::FIELDS`: one
//! `--flag` per setting, with the table's Spanish help, what it accepts and its
//! defaults per task, parsed by the same function the site and the widget use.

use clap::{Arg, ArgMatches, Command};
use vram::settings::{FIELDS, Field, RUNTIMES, Runtime, Spec, TASKS};
use vram::{Settings, Surface, Task};

/// The settings flags the user gave, as typed (read by `Settings::read_with`).
#[derive(Debug, Clone, Default)]
pub struct SettingsArgs {
    given: Vec<(Field, String)>,
}

impl SettingsArgs {
    pub fn get(&self, f: Field) -> Option<&str> {
        self.given
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, v)| v.as_str())
    }

    pub fn set(&mut self, f: Field, value: &str) {
        self.given.retain(|(g, _)| *g != f);
        self.given.push((f, value.to_owned()));
    }
}

/// Yes/no settings: a flag that takes `true|false` or nothing (and a JSON boolean in
/// `vramlab mcp`).
pub fn is_switch(f: Field) -> bool {
    matches!(
        f,
        Field::Checkpointing
            | Field::CpuOffload
            | Field::OffloadParams
            | Field::Serve
            | Field::Mmproj
    )
}

/// "por defecto: bf16; qlora: nf4-dq": the defaults, per task where they differ.
fn defaults(f: Field) -> String {
    let of = |t: Task| Settings::for_task(t).text(f, Surface::Cli);
    let base = of(Task::Inference);
    // Tasks whose default differs, grouped by value: "full, lora, qlora: true".
    let groups = grouped(
        TASKS
            .iter()
            .filter(|_| f != Field::Task)
            .map(|c| (c.id, of(c.value)))
            .filter(|(_, v)| *v != base),
    );
    let base = base.unwrap_or_else(|| match f {
        Field::Tp => "auto".into(),
        Field::CudaContext => "el de la familia de la GPU".into(),
        Field::GpuLayers => "all".into(),
        Field::BatchedTokens | Field::MaxSeqs => "auto, el de vLLM V1 para la GPU".into(),
        _ => "ninguno".into(),
    });
    let mut text = format!("por defecto: {base}");
    for (value, ids) in groups {
        text.push_str(&format!(
            "; {}: {}",
            ids.join(", "),
            value.unwrap_or_default()
        ));
    }
    // Inference defaults that follow the runtime ("--runtime ollama: true").
    let inference = Settings::for_task(Task::Inference).text(f, Surface::Cli);
    // Training-only settings follow the runtime too, but inference never reads them.
    let inference_only = !matches!(
        f,
        Field::Runtime
            | Field::Serve
            | Field::Precision
            | Field::Loss
            | Field::LoraTargets
            | Field::Optimizer
            | Field::Checkpointing
            | Field::CpuOffload
            | Field::OffloadParams
            | Field::Zero
    );
    let by_runtime = grouped(
        RUNTIMES
            .iter()
            .filter(|c| inference_only && c.value.runs(Task::Inference))
            .map(|c| {
                let value = Settings::defaults(Task::Inference, c.value).text(f, Surface::Cli);
                (c.id, value)
            })
            .filter(|(_, v)| *v != inference),
    );
    for (value, ids) in by_runtime {
        text.push_str(&format!(
            "; inferencia con --runtime {}: {}",
            ids.join(", "),
            value.unwrap_or_default()
        ));
    }
    text
}

/// Ids that share a value, grouped in first-seen order: [("true", ["full", "lora"])].
fn grouped(
    items: impl Iterator<Item = (&'static str, Option<String>)>,
) -> Vec<(Option<String>, Vec<&'static str>)> {
    let mut groups: Vec<(Option<String>, Vec<&'static str>)> = Vec::new();
    for (id, value) in items {
        match groups.iter_mut().find(|(v, _)| *v == value) {
            Some((_, ids)) => ids.push(id),
            None => groups.push((value, vec![id])),
        }
    }
    groups
}

fn value_name(f: Field) -> &'static str {
    match f {
        Field::Gpu => "ID",
        Field::GpuMemory | Field::CudaContext => "TAMAÑO",
        Field::Seq | Field::NewTokens | Field::BatchedTokens => "TOKENS",
        Field::Utilization => "FRACCIÓN",
        f if is_switch(f) => "true|false",
        f if f.bounds().is_some() => "N",
        _ => "VALOR",
    }
}

fn arg(spec: &'static Spec) -> Arg {
    let field = spec.field;
    let accepts = field.accepts(Surface::Cli);
    let stop = if accepts.ends_with('…') { "" } else { "." };
    let help = format!(
        "{} Admite {accepts}{stop} ({})",
        field.help(),
        defaults(field)
    );
    let arg = Arg::new(field.id())
        .long(field.cli())
        .help(help)
        .value_name(value_name(field))
        // "-4" reaches the parser, which says why it is refused; a switch's optional
        // value never swallows the next flag.
        .allow_hyphen_values(!is_switch(field))
        .value_parser(move |text: &str| {
            // Each flag alone, valid for some task and runtime (a runtime that only
            // trains, `--seq auto` that only the servers take): the combination is
            // checked once every flag is read. The message is inference's.
            let check =
                |task, runtime| Settings::defaults(task, runtime).set(field, text, Surface::Cli);
            let first = check(Task::Inference, Runtime::default_for(Task::Inference));
            let any = TASKS.iter().any(|t| {
                RUNTIMES
                    .iter()
                    .any(|r| r.value.runs(t.value) && check(t.value, r.value).is_ok())
            });
            match first {
                Err(e) if !any => Err(e),
                _ => Ok(text.to_owned()),
            }
        });
    match field {
        f if is_switch(f) => arg.num_args(0..=1).default_missing_value("true"),
        Field::GpuMemory => arg.conflicts_with(Field::Gpu.id()),
        _ => arg,
    }
}

impl clap::FromArgMatches for SettingsArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = FIELDS
            .iter()
            .filter_map(|s| {
                m.get_one::<String>(s.field.id())
                    .map(|v| (s.field, v.clone()))
            })
            .collect();
        Ok(SettingsArgs { given })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = SettingsArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for SettingsArgs {
    fn augment_args(cmd: Command) -> Command {
        FIELDS.iter().fold(cmd, |cmd, spec| cmd.arg(arg(spec)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        SettingsArgs::augment_args(cmd)
    }
}
