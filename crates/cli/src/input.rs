//! Reading what the user hands the CLI (a file, or stdin as `-`), with a size cap and
//! Spanish I/O errors. `explain` and `simulate` both read this way.

use std::io::Read;

/// How a path is named in messages: "la entrada estándar" for `-`.
pub fn shown(path: &str) -> String {
    if path == "-" {
        "la entrada estándar".into()
    } else {
        vram::units::clip(path)
    }
}

/// At most `max` bytes of `path` (or stdin); more is an error, never read whole.
/// `what` names the input in messages ("la traza", or "" for none).
pub fn read_capped(path: &str, max: u64, what: &str) -> Result<Vec<u8>, String> {
    let name = format!(
        "{what}{}{}",
        if what.is_empty() { "" } else { " " },
        shown(path)
    );
    let mut bytes = Vec::new();
    let result = if path == "-" {
        std::io::stdin()
            .lock()
            .take(max + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
    };
    result.map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no existe".to_string(),
            std::io::ErrorKind::PermissionDenied => "no hay permiso para leerlo".to_string(),
            std::io::ErrorKind::IsADirectory => "es un directorio".to_string(),
            _ => format!("error de E/S ({e})"),
        };
        format!("no se puede leer {name}: {why}")
    })?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{name} pasa de {} MiB; recórtalo (el error suele estar al final)",
            max >> 20
        ));
    }
    Ok(bytes)
}
