//! Why a pickle was not read, in Spanish, with the byte offset of the culprit.

/// An unpickling failure. `offset` is the position of the opcode byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PickleError {
    #[error(
        "el pickle usa la instrucción {name} (byte {offset}), que en Python crea objetos o ejecuta código; vramlab solo lee datos simples (diccionarios, listas, textos, números) y no la ejecuta"
    )]
    Refused { name: &'static str, offset: usize },
    #[error("el byte {offset} (0x{code:02x}) no es una instrucción de pickle")]
    UnknownOpcode { code: u8, offset: usize },
    #[error(
        "el pickle se corta en el byte {offset}: {name} necesita {needed} bytes y solo quedan {left}"
    )]
    Truncated {
        name: &'static str,
        offset: usize,
        needed: u64,
        left: usize,
    },
    #[error("el pickle termina sin la instrucción STOP (¿archivo cortado?)")]
    NoStop,
    #[error("protocolo de pickle {protocol} no admitido (byte {offset}); se admiten del 0 al 5")]
    Protocol { protocol: u8, offset: usize },
    #[error("pickle mal formado: {name} (byte {offset}) no encuentra en la pila lo que necesita")]
    StackUnderflow { name: &'static str, offset: usize },
    #[error("pickle mal formado: {name} (byte {offset}) no tiene un MARK antes")]
    NoMark { name: &'static str, offset: usize },
    #[error("pickle mal formado: {name} (byte {offset}) se aplica a {found} y necesita {expected}")]
    WrongTarget {
        name: &'static str,
        offset: usize,
        found: &'static str,
        expected: &'static str,
    },
    #[error("pickle mal formado: SETITEMS (byte {offset}) con un número impar de valores")]
    OddItems { offset: usize },
    #[error(
        "pickle mal formado: {name} (byte {offset}) pide la entrada {index} de la memoria, que no existe"
    )]
    MemoMissing {
        name: &'static str,
        offset: usize,
        index: u64,
    },
    #[error("el pickle pasa de {cap} valores; vramlab no lee archivos tan grandes")]
    TooManyValues { cap: usize },
    #[error("el pickle pasa de {cap} entradas en su memoria interna")]
    MemoFull { cap: usize },
    #[error("el pickle anida más de {cap} niveles de MARK")]
    TooDeep { cap: usize },
    #[error(
        "pickle mal formado: al terminar (byte {offset}) quedan {left} valores en la pila y se esperaba uno"
    )]
    BadStop { offset: usize, left: usize },
}
