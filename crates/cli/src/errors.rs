//! Spanish messages for command-line parse errors, and writing to stdout and stderr
//! without panicking: a full disk is an error with a non-zero exit, a closed pipe
//! (`vramlab … | head`) is not. Both go through [`crate::terminal::terminal_safe`].

use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::io::Write;
use std::process::ExitCode;

/// clap renders help with a few fixed English words; these are their Spanish forms.
const HELP_WORDS: &[(&str, &str)] = &[
    ("Usage:", "Uso:"),
    ("Options:", "Opciones:"),
    ("Arguments:", "Argumentos:"),
    ("Commands:", "Órdenes:"),
    ("[OPTIONS]", "[OPCIONES]"),
    ("<COMMAND>", "<ORDEN>"),
    ("[default: ", "[por defecto: "),
    ("[possible values: ", "[valores: "),
    ("[aliases: ", "[alias: "),
    ("Print help", "Muestra esta ayuda"),
    ("Print version", "Muestra la versión"),
];

/// Translates clap's fixed help words.
pub fn spanish_help(text: &str) -> String {
    HELP_WORDS
        .iter()
        .fold(text.to_owned(), |t, (en, es)| t.replace(en, es))
}

/// Writes to stdout. A closed pipe (`vramlab … | head`) is not an error: the reader
/// had what it wanted. Any other failure (a full disk) is, in Spanish.
pub fn print_out(text: &str) -> Result<(), String> {
    let text = crate::terminal::terminal_safe(text);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!(
            "no se pudo escribir la salida: {}",
            crate::input::io_why(&e)
        )),
    }
}

/// Writes one line to stderr; if even that fails (stderr on a full disk) there is
/// nowhere left to say so, and the exit code carries the failure.
pub fn print_err(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", crate::terminal::terminal_safe(line));
}

/// Prints a command's result and turns it into the exit code: 0 when written, 2 for an
/// error (the command's or the write's).
pub fn finish(result: Result<String, String>) -> ExitCode {
    match result.and_then(|text| print_out(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            print_err(&format!("vramlab: error: {e}"));
            ExitCode::from(2)
        }
    }
}

/// Prints a result that is itself a failure (a benchmark where no run gave a time):
/// the output, then one Spanish line on stderr, and exit code 1.
pub fn finish_failed(text: &str, why: &str) -> ExitCode {
    match print_out(text) {
        Ok(()) => {
            print_err(&format!("vramlab: error: {why}"));
            ExitCode::from(1)
        }
        Err(e) => finish(Err(e)),
    }
}

fn context(e: &clap::Error, kind: ContextKind) -> String {
    match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(v)) => v.join(", "),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Prints help and version as clap would; everything else as one Spanish line.
pub fn clap_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            return finish(Ok(spanish_help(&e.to_string())));
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            print_err(
                "vramlab: falta la orden: usa «vramlab estimate», «vramlab explain», «vramlab simulate», «vramlab snapshot», «vramlab bench attention», «vramlab mcp», «vramlab models» o «vramlab gpus» (--help para más)",
            );
            return ExitCode::from(2);
        }
        _ => {}
    }
    print_err(&format!("vramlab: error: {}", clap_message(e)));
    ExitCode::from(2)
}

/// clap's error about a flag or value, in Spanish (clap's own is English).
pub fn clap_message(e: &clap::Error) -> String {
    let arg = context(e, ContextKind::InvalidArg);
    let value = context(e, ContextKind::InvalidValue);
    match e.kind() {
        ErrorKind::UnknownArgument => format!("argumento desconocido «{arg}»"),
        ErrorKind::InvalidSubcommand => {
            let name = context(e, ContextKind::InvalidSubcommand);
            match context(e, ContextKind::SuggestedSubcommand) {
                s if s.is_empty() => format!("orden desconocida «{name}» (--help las lista)"),
                s => format!(
                    "orden desconocida «{name}»; ¿querías decir «{}»?",
                    s.replace(", ", "» o «")
                ),
            }
        }
        ErrorKind::InvalidValue => {
            let valid = context(e, ContextKind::ValidValue);
            if value.is_empty() {
                format!("falta el valor de {arg}")
            } else if valid.is_empty() {
                format!("valor no válido «{value}» para {arg}")
            } else {
                format!("valor no válido «{value}» para {arg} (admite: {valid})")
            }
        }
        ErrorKind::ValueValidation => match e.source_text() {
            // Our parsers' messages name the setting, the value and the bounds.
            Some(detail) => {
                let flag = arg.split_whitespace().next().unwrap_or(&arg);
                format!("{flag}: {detail}")
            }
            None => format!("valor no válido «{value}» para {arg}"),
        },
        ErrorKind::MissingRequiredArgument => format!("falta el argumento obligatorio {arg}"),
        ErrorKind::ArgumentConflict => {
            let other = context(e, ContextKind::PriorArg);
            format!("{arg} no se puede usar junto con {other}")
        }
        ErrorKind::TooManyValues | ErrorKind::WrongNumberOfValues => {
            format!("número de valores incorrecto para {arg}")
        }
        ErrorKind::NoEquals => format!("{arg} necesita un valor con «=»"),
        _ => "argumentos no válidos (usa --help)".into(),
    }
}

trait SourceText {
    fn source_text(&self) -> Option<String>;
}

impl SourceText for clap::Error {
    /// The message of a value parser's error (ours are Spanish already).
    fn source_text(&self) -> Option<String> {
        std::error::Error::source(self).map(|s| s.to_string())
    }
}
