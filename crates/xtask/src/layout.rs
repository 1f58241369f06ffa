//! The layout check `cargo xtask test` runs first: the shape of the code, kept as a
//! rule rather than a wish.
//!
//! - No module cycle inside a crate: sibling modules (children of one parent) form a
//!   graph by the paths one uses of the other (`crate::…`, `super::…`, `use` trees,
//!   followed once through a parent's `pub use`); a strongly connected group of two or
//!   more is a cycle. A parent using its children, or a child its ancestors, is no edge.
//! - No production file over [`MAX_FILE_LINES`] lines (test modules, inline or in their
//!   own file behind `#[cfg(test)]`, do not count).
//! - No function over [`MAX_FN_LINES`] lines, from `fn` to its closing brace.
//! - ARCHITECTURE.md within [`MAX_ARCHITECTURE_WORDS`] words.
//!
//! Exceptions live in [`ALLOW`], each with its reason; an entry that no longer matches
//! anything fails too, so the list only shrinks. Files are parsed with `syn` from each
//! crate's `lib.rs`/`main.rs`, following `mod` declarations, so only compiled modules
//! are seen.

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::visit::Visit;

pub const MAX_FILE_LINES: usize = 900;
pub const MAX_FN_LINES: usize = 200;
/// ARCHITECTURE.md stays a map a newcomer reads in one sitting; mechanisms belong in
/// the `//!` docs of the modules that implement them.
pub const MAX_ARCHITECTURE_WORDS: usize = 2500;

/// One accepted exception: a production file (`crates/…/x.rs`) or a function
/// (`crates/…/x.rs::name`) over its limit.
struct Allow {
    what: &'static str,
    why: &'static str,
}

const ALLOW: &[Allow] = &[
    Allow {
        what: "crates/vram/src/validation/published.rs",
        why: "data: the published validation cases, one literal each with its source",
    },
    Allow {
        what: "crates/vram/src/validation/hand.rs::cases",
        why: "data: the hand-derived validation cases, one literal each with its source",
    },
];

/// Runs the check over every crate under `root/crates`.
pub fn check(root: &Path) -> Result<()> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    for dir in crates {
        for root_file in ["src/lib.rs", "src/main.rs"] {
            let file = dir.join(root_file);
            if !file.is_file() {
                continue;
            }
            let rel = |p: &Path| {
                p.strip_prefix(root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .replace('\\', "/")
            };
            let tree = CrateTree::load(&file, &|p| {
                std::fs::read_to_string(p).with_context(|| format!("leyendo {}", p.display()))
            })?;
            let found = tree.problems(&|p| rel(p));
            for (key, text) in found {
                if ALLOW.iter().any(|a| a.what == key) {
                    seen.insert(key);
                } else {
                    problems.push(text);
                }
            }
        }
    }
    let words = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
        .map(|t| t.split_whitespace().count())
        .unwrap_or(0);
    if words > MAX_ARCHITECTURE_WORDS {
        problems.push(format!(
            "ARCHITECTURE.md: {words} palabras (máximo {MAX_ARCHITECTURE_WORDS}): los mecanismos van en los //! de sus módulos"
        ));
    }
    for a in ALLOW {
        if !seen.contains(a.what) {
            problems.push(format!(
                "{}: la excepción ya no hace falta (era: {}); quítala de ALLOW",
                a.what, a.why
            ));
        }
    }
    if problems.is_empty() {
        eprintln!(
            "xtask: forma del código en orden (sin ciclos de módulos, archivos ≤ {MAX_FILE_LINES} líneas, funciones ≤ {MAX_FN_LINES})"
        );
        return Ok(());
    }
    for p in &problems {
        eprintln!("  {p}");
    }
    bail!(
        "la forma del código no cumple sus reglas ({} problemas; ver crates/xtask/src/layout.rs)",
        problems.len()
    )
}

/// A module path inside one crate: `["estimate", "ggml"]`; the root is empty.
type ModPath = Vec<String>;

/// One parsed module: where it lives and what it refers to.
#[derive(Debug)]
struct Module {
    file: PathBuf,
    /// Production lines of the file this module owns (only for file modules).
    lines: Option<usize>,
    /// `(name, first line, last line)` of every function in it.
    fns: Vec<(String, usize, usize)>,
    /// Paths used, as written (`crate::x::y`, `super::z`), with their line.
    refs: Vec<(Vec<String>, usize)>,
    /// `pub use` re-exports: the name it gives and the path it names.
    reexports: HashMap<String, Vec<String>>,
    /// Child modules declared in it.
    children: BTreeSet<String>,
}

#[derive(Debug)]
struct CrateTree {
    modules: BTreeMap<ModPath, Module>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| matches!(&m, syn::Meta::Path(p) if p.is_ident("test")))
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// Flattens a `use` tree into full paths (a glob keeps its prefix).
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                out.push((prefix.clone(), prefix.last().cloned().unwrap_or_default()));
            } else {
                let mut p = prefix.clone();
                p.push(name.clone());
                out.push((p, name));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            p.push(r.ident.to_string());
            out.push((p, r.rename.to_string()));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), String::new())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

/// Collects paths and functions of production code.
struct Collector {
    fns: Vec<(String, usize, usize)>,
    refs: Vec<(Vec<String>, usize)>,
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        if is_cfg_test(item_attrs(i)) {
            return;
        }
        // Inline modules are their own modules, visited on their own.
        if let syn::Item::Mod(m) = i
            && m.content.is_some()
        {
            return;
        }
        syn::visit::visit_item(self, i);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_cfg_test(&f.attrs) {
            return;
        }
        self.fns.push((
            f.sig.ident.to_string(),
            f.sig.fn_token.span.start().line,
            f.block.brace_token.span.close().end().line,
        ));
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.fns.push((
            f.sig.ident.to_string(),
            f.sig.fn_token.span.start().line,
            f.block.brace_token.span.close().end().line,
        ));
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(b) = &f.default {
            self.fns.push((
                f.sig.ident.to_string(),
                f.sig.fn_token.span.start().line,
                b.brace_token.span.close().end().line,
            ));
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut out = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut out);
        let line = u.span().start().line;
        self.refs.extend(out.into_iter().map(|(p, _)| (p, line)));
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 {
            self.refs.push((segs, p.span().start().line));
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Paths inside macro calls (`format!`, `view!`…) are tokens: read `a::b` runs.
        token_paths(m.tokens.clone(), &mut self.refs);
        syn::visit::visit_macro(self, m);
    }
}

/// The `a::b::c` runs of a token stream, with the line each starts on.
fn token_paths(ts: proc_macro2::TokenStream, refs: &mut Vec<(Vec<String>, usize)>) {
    let mut run: Vec<String> = Vec::new();
    let mut line = 0;
    let mut colons = 0;
    let flush = |run: &mut Vec<String>, line: usize, refs: &mut Vec<(Vec<String>, usize)>| {
        if run.len() > 1 {
            refs.push((std::mem::take(run), line));
        }
        run.clear();
    };
    for tt in ts {
        match tt {
            proc_macro2::TokenTree::Ident(i) => {
                if colons != 2 {
                    flush(&mut run, line, refs);
                }
                if run.is_empty() {
                    line = i.span().start().line;
                }
                run.push(i.to_string());
                colons = 0;
            }
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => colons += 1,
            proc_macro2::TokenTree::Group(g) => {
                flush(&mut run, line, refs);
                colons = 0;
                token_paths(g.stream(), refs);
            }
            _ => {
                flush(&mut run, line, refs);
                colons = 0;
            }
        }
    }
    flush(&mut run, line, refs);
}

impl CrateTree {
    fn load(root: &Path, read: &dyn Fn(&Path) -> Result<String>) -> Result<CrateTree> {
        let mut tree = CrateTree {
            modules: BTreeMap::new(),
        };
        let text = read(root)?;
        let file = syn::parse_file(&text).with_context(|| format!("{}", root.display()))?;
        let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
        tree.add(Vec::new(), root, &dir, &file.items, Some(&text), read)?;
        Ok(tree)
    }

    /// Adds one module (its items), then its children. `dir` is where its child files
    /// live; `text` the whole file when the module is a file.
    fn add(
        &mut self,
        path: ModPath,
        file: &Path,
        dir: &Path,
        items: &[syn::Item],
        text: Option<&str>,
        read: &dyn Fn(&Path) -> Result<String>,
    ) -> Result<()> {
        let mut c = Collector {
            fns: Vec::new(),
            refs: Vec::new(),
        };
        let mut reexports = HashMap::new();
        let mut children = BTreeSet::new();
        let mut test_lines = 0;
        for item in items {
            if is_cfg_test(item_attrs(item)) {
                let span = item.span();
                test_lines += span.end().line + 1 - span.start().line;
                continue;
            }
            c.visit_item(item);
            if let syn::Item::Use(u) = item
                && matches!(
                    u.vis,
                    syn::Visibility::Public(_) | syn::Visibility::Restricted(_)
                )
            {
                let mut out = Vec::new();
                use_paths(&u.tree, &mut Vec::new(), &mut out);
                for (p, name) in out {
                    if !name.is_empty() {
                        reexports.insert(name, p);
                    }
                }
            }
            if let syn::Item::Mod(m) = item {
                children.insert(m.ident.to_string());
            }
        }
        let lines = text.map(|t| t.lines().count().saturating_sub(test_lines));
        self.modules.insert(
            path.clone(),
            Module {
                file: file.to_path_buf(),
                lines,
                fns: c.fns,
                refs: c.refs,
                reexports,
                children,
            },
        );
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            if is_cfg_test(&m.attrs) {
                continue;
            }
            let mut child = path.clone();
            child.push(m.ident.to_string());
            let name = m.ident.to_string();
            match &m.content {
                Some((_, inner)) => {
                    self.add(child, file, &dir.join(&name), inner, None, read)?;
                }
                None => {
                    let flat = dir.join(format!("{name}.rs"));
                    let nested = dir.join(&name).join("mod.rs");
                    let (f, d) = if read(&flat).is_ok() {
                        (flat, dir.join(&name))
                    } else {
                        (nested, dir.join(&name))
                    };
                    let text = read(&f)?;
                    let parsed =
                        syn::parse_file(&text).with_context(|| format!("{}", f.display()))?;
                    self.add(child, &f, &d, &parsed.items, Some(&text), read)?;
                }
            }
        }
        Ok(())
    }

    /// The module a path written in `from` names, as far as modules go: `crate::a::B`
    /// in a crate with module `a` is `["a"]`. `None` for other crates and locals.
    fn resolve(&self, from: &ModPath, path: &[String]) -> Option<ModPath> {
        let (mut abs, rest): (ModPath, &[String]) = match path.first()?.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (from.clone(), &path[1..]),
            "super" => {
                let mut base = from.clone();
                let mut i = 0;
                while path.get(i).is_some_and(|s| s == "super") {
                    base.pop()?;
                    i += 1;
                }
                (base, &path[i..])
            }
            first if self.modules.get(from)?.children.contains(first) => (from.clone(), path),
            _ => return None,
        };
        let mut i = 0;
        while i < rest.len() {
            let mut next = abs.clone();
            next.push(rest[i].clone());
            if self.modules.contains_key(&next) {
                abs = next;
                i += 1;
                continue;
            }
            // A re-export in this module names where the item really lives. A
            // re-export of itself (`pub use self::x::*` globs have no name) ends here.
            if let Some(target) = self.modules.get(&abs)?.reexports.get(&rest[i])
                && target.first().is_some_and(|s| s != &rest[i])
                && let Some(t) = self.resolve(&abs, target)
            {
                abs = t;
            }
            break;
        }
        Some(abs)
    }

    /// Every problem as `(allow key, message)`; `rel` names files for messages.
    fn problems(&self, rel: &dyn Fn(&Path) -> String) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for m in self.modules.values() {
            let file = rel(&m.file);
            if let Some(lines) = m.lines
                && lines > MAX_FILE_LINES
            {
                out.push((
                    file.clone(),
                    format!("{file}: {lines} líneas de producción (máximo {MAX_FILE_LINES}): divídelo por lo que hace cada parte"),
                ));
            }
            for (name, start, end) in &m.fns {
                let len = end + 1 - start;
                if len > MAX_FN_LINES {
                    out.push((
                        format!("{file}::{name}"),
                        format!(
                            "{file}:{start}: fn {name} tiene {len} líneas (máximo {MAX_FN_LINES})"
                        ),
                    ));
                }
            }
        }
        // Sibling edges under each parent, with one example reference each.
        let mut edges: BTreeMap<ModPath, BTreeMap<(String, String), String>> = BTreeMap::new();
        for (from, m) in &self.modules {
            for (path, line) in &m.refs {
                let Some(to) = self.resolve(from, path) else {
                    continue;
                };
                let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if common == from.len() || common == to.len() {
                    continue;
                }
                edges
                    .entry(from[..common].to_vec())
                    .or_default()
                    .entry((from[common].clone(), to[common].clone()))
                    .or_insert_with(|| format!("{}:{line} usa {}", rel(&m.file), path.join("::")));
            }
        }
        for (parent, graph) in &edges {
            for cycle in cycles(graph.keys()) {
                let mut why = Vec::new();
                for ((a, b), example) in graph {
                    if cycle.contains(a) && cycle.contains(b) {
                        why.push(format!("{a} → {b} ({example})"));
                    }
                }
                let at = if parent.is_empty() {
                    "la raíz".to_owned()
                } else {
                    parent.join("::")
                };
                let names: Vec<_> = cycle.iter().cloned().collect();
                out.push((
                    format!("cycle {}", names.join(",")),
                    format!(
                        "{}: ciclo de módulos bajo {at}: {}",
                        rel(&self.modules[&Vec::new()].file),
                        why.join("; ")
                    ),
                ));
            }
        }
        out
    }
}

/// Strongly connected groups of two or more nodes (Tarjan's algorithm, iterative
/// enough for module graphs: recursion depth is the number of siblings).
fn cycles<'a>(edges: impl Iterator<Item = &'a (String, String)>) -> Vec<BTreeSet<String>> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    struct State<'a> {
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(v: &'a str, adj: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for &w in adj.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !s.index.contains_key(w) {
                visit(w, adj, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).map_or(0, |l| {
                    *l = (*l).min(lw);
                    *l
                });
                let _ = lv;
            } else if s.on.contains(w) {
                let iw = s.index[w];
                if let Some(l) = s.low.get_mut(v) {
                    *l = (*l).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                group.insert(w.to_owned());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for &v in adj.keys() {
        if !s.index.contains_key(v) {
            visit(v, &adj, &mut s);
        }
    }
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Vec<String> {
        let map: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), (*t).to_owned()))
            .collect();
        let read = |p: &Path| {
            map.get(p)
                .cloned()
                .with_context(|| format!("no {}", p.display()))
        };
        let t = CrateTree::load(Path::new("src/lib.rs"), &read).expect("parses");
        t.problems(&|p| p.display().to_string())
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    /// A crate's files (path, text) and the problems expected of it.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);

    #[test]
    fn finds_sibling_cycles_and_nothing_else() {
        let cases: &[Case] = &[
            // a → b → a.
            (
                &[
                    ("src/lib.rs", "mod a; mod b;"),
                    ("src/a.rs", "use crate::b::X; pub struct Y;"),
                    (
                        "src/b.rs",
                        "pub struct X; fn f() -> crate::a::Y { todo!() }",
                    ),
                ],
                &["cycle a,b"],
            ),
            // Through `super::` and a folder module.
            (
                &[
                    ("src/lib.rs", "mod a; mod b;"),
                    ("src/a/mod.rs", "mod c;"),
                    ("src/a/c.rs", "use super::super::b::X;"),
                    ("src/b.rs", "pub fn g() { crate::a::h(); }"),
                ],
                &["cycle a,b"],
            ),
            // Through a root re-export: `crate::Y` is `a::Y`.
            (
                &[
                    ("src/lib.rs", "mod a; mod b; pub use a::Y;"),
                    ("src/a.rs", "pub struct Y; fn f() { crate::b::g() }"),
                    ("src/b.rs", "fn g() -> crate::Y { todo!() }"),
                ],
                &["cycle a,b"],
            ),
            // Inside a macro call.
            (
                &[
                    ("src/lib.rs", "mod a; mod b;"),
                    ("src/a.rs", "fn f() { println!(\"{}\", crate::b::N) }"),
                    ("src/b.rs", "fn g() { crate::a::f() }"),
                ],
                &["cycle a,b"],
            ),
            // Parent ↔ child and test-only uses are no cycle.
            (
                &[
                    ("src/lib.rs", "mod a; mod b; fn r() { a::f() }"),
                    ("src/a.rs", "use crate::b::X; fn f() { crate::r() }"),
                    (
                        "src/b.rs",
                        "pub struct X; #[cfg(test)] mod tests { use crate::a::f; }",
                    ),
                ],
                &[],
            ),
            // A grouped `use` of two siblings, one way only.
            (
                &[
                    ("src/lib.rs", "mod a; mod b; mod c;"),
                    ("src/a.rs", "use crate::{b::X, c::Z};"),
                    ("src/b.rs", "use crate::c::Z;"),
                    ("src/c.rs", ""),
                ],
                &[],
            ),
        ];
        for (files, want) in cases {
            assert_eq!(tree(files), *want, "{files:?}");
        }
    }

    #[test]
    fn long_files_and_functions_outside_tests() {
        let body = "    let _x = 1;\n".repeat(MAX_FN_LINES - 1);
        let long_fn = format!("fn long() {{\n{body}}}\n");
        let short_fn = format!(
            "fn short() {{\n{}}}\n",
            "    let _x = 1;\n".repeat(MAX_FN_LINES - 2)
        );
        let filler = "const C: u8 = 0;\n".repeat(MAX_FILE_LINES + 1);
        let tests = format!("#[cfg(test)]\nmod tests {{\n{filler}}}\n");
        let found = tree(&[
            ("src/lib.rs", "mod a; mod b; mod c;"),
            ("src/a.rs", &long_fn),
            ("src/b.rs", &format!("{short_fn}{tests}")),
            ("src/c.rs", &filler),
        ]);
        assert_eq!(found, ["src/a.rs::long", "src/c.rs"]);
    }

    #[test]
    fn tarjan_groups() {
        let e = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter().map(|(a, b)| ((*a).into(), (*b).into())).collect()
        };
        let g = e(&[
            ("a", "b"),
            ("b", "c"),
            ("c", "a"),
            ("c", "d"),
            ("d", "e"),
            ("e", "d"),
        ]);
        let mut found: Vec<Vec<String>> = cycles(g.iter())
            .into_iter()
            .map(|s| s.into_iter().collect())
            .collect();
        found.sort();
        assert_eq!(found, [vec!["a", "b", "c"], vec!["d", "e"]]);
        assert!(cycles(e(&[("a", "b"), ("b", "c")]).iter()).is_empty());
    }
}
