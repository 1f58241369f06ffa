//! `search` is the guide's full-text search, shared by the two places that must agree
//! on what a word is: `sitegen` builds the index at build time, and the search island
//! answers queries against it in the browser.
//!
//! Spanish needs more than lowercasing. Words are stemmed with the Snowball Spanish
//! stemmer ("asignaciones" and "asignación" meet at "asign"), accents and ñ are folded
//! so a reader who types "cache" or "atencion" still finds "caché" and "atención", and
//! stop words ("de", "la", "que") neither fill the index nor narrow a query.
//!
//! The crate is pure: no I/O, and every input is bounded ([`query::MAX_QUERY_CHARS`],
//! [`query::MAX_TERMS`]) so a pasted novel cannot stall the page.

pub mod index;
pub mod query;
pub mod text;

pub use index::{Doc, Index, IndexBuilder, Section};
pub use query::{Hit, search};
