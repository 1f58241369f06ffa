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

/// Why an I/O operation failed, in Spanish: the common kinds by name, the rest with the
/// operating system's code (its own text is English).
pub fn io_why(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let known = match e.kind() {
        K::NotFound => Some("no existe"),
        K::PermissionDenied => Some("no hay permiso para leerlo"),
        K::IsADirectory => Some("es un directorio"),
        K::NotSeekable => Some("no se puede recorrer (¿es una tubería o un dispositivo?)"),
        K::UnexpectedEof => Some("se acaba antes de lo esperado"),
        K::InvalidData => Some("no es texto UTF-8 válido"),
        K::StorageFull => Some("no queda espacio en el disco"),
        K::BrokenPipe => Some("el otro extremo de la tubería se cerró"),
        K::Interrupted => Some("la operación se interrumpió"),
        K::OutOfMemory => Some("no hay memoria suficiente"),
        _ => None,
    };
    match (known, e.raw_os_error()) {
        (Some(why), _) => why.to_owned(),
        (None, Some(code)) => format!("error de E/S del sistema (código {code})"),
        (None, None) => "error de E/S".to_owned(),
    }
}

/// Opens `path` for reading without ever blocking in `open()`: a FIFO nobody writes to
/// would hold a plain `open()` for ever, so it is opened non-blocking and then switched
/// back to blocking reads (with no writer the first read is the end: empty input). A
/// pipe with a writer (`--model /dev/stdin`, `<(…)`) reads as usual; devices are read up
/// to the caller's cap.
pub fn open(path: &str) -> Result<std::fs::File, String> {
    if std::fs::metadata(path).map_err(|e| io_why(&e))?.is_dir() {
        return Err("es un directorio".into());
    }
    #[cfg(unix)]
    {
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(path)
            .map_err(|e| io_why(&e))?;
        let flags = fcntl_getfl(&file).map_err(|e| io_why(&e.into()))?;
        fcntl_setfl(&file, flags - OFlags::NONBLOCK).map_err(|e| io_why(&e.into()))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    std::fs::File::open(path).map_err(|e| io_why(&e))
}

/// At most `max` bytes of `path` as UTF-8 text (see [`read_capped`]).
pub fn read_text_capped(path: &str, max: u64, what: &str) -> Result<String, String> {
    let bytes = read_capped(path, max, what)?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: no es texto UTF-8 válido (byte {})",
            shown(path),
            e.utf8_error().valid_up_to()
        )
    })
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
        open(path)
            .map_err(|why| format!("no se puede leer {name}: {why}"))?
            .take(max + 1)
            .read_to_end(&mut bytes)
    };
    result.map_err(|e| format!("no se puede leer {name}: {}", io_why(&e)))?;
    if bytes.len() as u64 > max {
        let size = vram::units::ByteSize(max).binary();
        return Err(if what.is_empty() {
            format!("{name} pasa de {size}; recórtalo (el error suele estar al final)")
        } else {
            format!("{name} pasa de {size}; vramlab no lee archivos tan grandes")
        });
    }
    Ok(bytes)
}
