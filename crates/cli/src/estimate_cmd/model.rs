//! Finding the model a command line names: a catalog id, a `config.json`, a `.gguf`
//! (architecture and exact bytes from its header) or a bare parameter count, plus the
//! exact bytes of a `--weights-file`.

use std::path::Path;

use vram::estimate::ModelInput;
use vram::import::StoredWeights;
use vram::{Model, catalog, gguf_arch, hf_config};

use super::Args;
use crate::input::shown;
use crate::inspect_cmd::{Header, read_header};

/// The model, its display name and what reading it noted (Spanish).
pub struct Loaded {
    pub model: Model,
    pub name: Option<String>,
    pub notes: Vec<String>,
    /// Where the model comes from, as a launch command names it: its Hub repository
    /// (a catalog model) or the file given (a config.json or a .gguf).
    pub hub: Option<String>,
    pub file: Option<String>,
}

fn arch_model(arch: vram::Architecture, total_params: Option<u64>) -> Model {
    Model::new(ModelInput::Arch {
        arch: Box::new(arch),
        total_params,
    })
}

fn stored(model: &mut Model, header: &Header, path: &str) {
    let source = format!("la cabecera de {}", shown(path));
    // A GGUF lists each block's expert tensors: `--n-cpu-moe` moves exactly those.
    model.stored = Some(match header {
        Header::Gguf(h) => StoredWeights::from_gguf(h, source),
        Header::Safetensors { summary, .. } => {
            StoredWeights::from_safetensors(summary, source, path)
        }
    });
    model.tensors = Some(header.total().tensors);
}

pub fn load(args: &Args) -> Result<Loaded, String> {
    let mut loaded = match (&args.model, args.params) {
        (Some(m), _) => {
            if let Some(p) = catalog::model(m) {
                Loaded {
                    model: arch_model(p.arch.clone(), args.total_params),
                    name: Some(p.name.clone()),
                    notes: Vec::new(),
                    hub: Some(p.hf_repo.clone()).filter(|r| !r.is_empty()),
                    file: None,
                }
            } else if m.ends_with(".gguf") {
                let header = read_header(m)?;
                let Header::Gguf(h) = &header else {
                    return Err(format!("{}: no es un archivo GGUF", shown(m)));
                };
                let (arch, mut notes) =
                    gguf_arch::architecture(h).map_err(|e| format!("{}: {e}", shown(m)))?;
                let mut model = arch_model(arch, args.total_params);
                stored(&mut model, &header, m);
                // A split file's header describes the whole model; its tensors, one part.
                match model.stored.as_ref().and_then(|s| s.shard) {
                    Some((part, parts)) => {
                        model.stored = None;
                        model.tensors = None;
                        notes.push(format!(
                            "{} es la parte {part} de {parts} de un GGUF dividido: se lee su arquitectura, y los pesos se cuentan por el formato (--dtype), no por sus bytes.",
                            shown(m)
                        ));
                    }
                    None => {
                        if let ModelInput::Arch { total_params, .. } = &mut model.input {
                            *total_params = total_params.or(Some(h.total.params));
                        }
                    }
                }
                Loaded {
                    model,
                    name: Some(shown(m)),
                    notes,
                    hub: None,
                    file: Some(m.clone()),
                }
            } else {
                let path = Path::new(m);
                let looks_like_file = m.ends_with(".json") || m.contains('/') || m.contains('\\');
                if !looks_like_file {
                    return Err(format!(
                        "no hay ningún modelo «{}» en el catálogo (mira «vramlab models») ni es una ruta a un config.json o a un .gguf",
                        vram::units::clip(m)
                    ));
                }
                // Capped while reading, never by `metadata().len()`: a pipe or a device
                // reports 0 there and would be read without end.
                let text = crate::input::read_text_capped(
                    m,
                    hf_config::MAX_CONFIG_BYTES as u64,
                    "el config.json",
                )?;
                let (arch, notes) =
                    hf_config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                Loaded {
                    model: arch_model(arch, args.total_params),
                    name: Some(path.display().to_string()),
                    notes,
                    hub: None,
                    file: Some(m.clone()),
                }
            }
        }
        (None, Some(n)) => Loaded {
            model: Model::new(ModelInput::Params(n)),
            name: None,
            notes: Vec::new(),
            hub: None,
            file: None,
        },
        (None, None) => {
            return Err("indica --model <id, config.json o .gguf> o --params <número>".into());
        }
    };
    if let Some(f) = &args.weights_file {
        let header = read_header(f)?;
        stored(&mut loaded.model, &header, f);
        // Packed quantised tensors give no parameter count.
        let params = loaded.model.stored.as_ref().and_then(|s| s.params);
        if let ModelInput::Arch { total_params, .. } = &mut loaded.model.input
            && args.total_params.is_none()
            && params.is_some()
        {
            *total_params = params;
        }
    }
    Ok(loaded)
}
