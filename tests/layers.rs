//! Layers only look down: a top-level module may refer to modules of its own
//! layer and of the layers below it, never above; modules of one layer may
//! not form a cycle.
//!
//! The workspace's crates are layers too (json-compat → mirotrace-engine →
//! mirotrace, and mirotrace-record, on no other, under mirotrace), and Cargo enforces those: a crate cannot name one that
//! depends on it. What Cargo cannot see is the order of the modules inside
//! one crate; that is what this test checks, crate by crate.
//!
//! The order is defined here, once ([`LAYERS`]); docs/architecture.md
//! shows it, and `the_docs_show_the_layer_table` keeps the two equal. The
//! check reads each crate's src/**/*.rs with comments and literals stripped
//! and collects every reference to a top-level module: `crate::m` paths (use
//! declarations, grouped `use crate::{a, b::{c}}`, inline paths, `$crate`),
//! `super::` chains that climb to the crate root, and in the binary
//! (main.rs and the modules it declares) `mirotrace::m`. A reference to a
//! module of a crate below (re-exported at the crate root, as the CLI crate
//! re-exports the engine's) is always allowed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One crate of the workspace and its top-level modules by layer, bottom
/// first. A module may refer to its own layer and the layers before it,
/// and to any module of a crate below. A new module must be added here
/// (and to docs/architecture.md) before the test passes.
struct Crate {
    /// The package name.
    name: &'static str,
    /// Its folder, relative to the workspace root.
    dir: &'static str,
    /// What it holds, for the docs' heading.
    what: &'static str,
    layers: &'static [(&'static [&'static str], &'static str)],
}

/// The crates, bottom first: each depends only on the ones before it.
const LAYERS: &[Crate] = &[
    Crate {
        name: "json-compat",
        dir: "crates/json-compat",
        what: "Python's JSON and the json_repair port, usable on their own",
        layers: JSON_COMPAT,
    },
    Crate {
        name: "mirotrace-engine",
        dir: "crates/engine",
        what: "traces in, verdicts and figures out",
        layers: ENGINE,
    },
    Crate {
        name: "mirotrace-record",
        dir: "crates/record",
        what: "the recording proxy (`mirotrace record`), on no other crate",
        layers: RECORD,
    },
    Crate {
        name: "mirotrace",
        dir: ".",
        what: "the CLI: views, analyses, writers, commands",
        layers: CLI,
    },
];

const JSON_COMPAT: &[(&[&str], &str)] = &[
    (&["pyjson"], "JSON values with Python's semantics"),
    (
        &["json_repair"],
        "the port of json_repair, function by function",
    ),
];

const ENGINE: &[(&[&str], &str)] = &[
    (
        &["model", "policy"],
        "values shared by everything; the layer's knobs",
    ),
    (&["read"], "inputs and input formats → traces of attempts"),
    (&["parse"], "tool calls and their arguments, tolerantly"),
    (&["repair"], "in-place repairs before a call runs"),
    (
        &["detect"],
        "what rolls an attempt back, one detector per file",
    ),
    (&["replay"], "the session loop → one verdict per attempt"),
    (
        &["crosscheck"],
        "a task log's verdicts against the replay's",
    ),
    (&["engine"], "the parallel driver"),
    (&["metrics"], "figures defined once, and written as text"),
];

const RECORD: &[(&[&str], &str)] = &[
    (
        &["error", "line", "redact", "upstream"],
        "errors; a recording's line; credentials; what is forwarded",
    ),
    (&["writer"], "the recording file and its writer thread"),
    (&["call"], "one call's bodies on the way through, its line"),
    (&["proxy"], "the listener, connections, shutdown"),
];

const CLI: &[(&[&str], &str)] = &[
    (&["render"], "the view model, table and Markdown"),
    (
        &["analyze", "diff", "keywords"],
        "the analyses: figures, views and JSON",
    ),
    (
        &["export", "html", "output", "columnar"],
        "writers: export formats, HTML pages, atomic -o files, columnar verdicts",
    ),
    (&["commands"], "one module per command"),
    (&["cli", "main"], "the binary: arguments, exit codes"),
];

/// A known upward reference, allowed until the branch that removes it lands.
struct Allowed {
    /// The referring file, relative to the crate root.
    file: &'static str,
    /// The top-level module it reaches up to.
    to: &'static str,
    /// What it is, and which branch removes it.
    why: &'static str,
}

/// Known upward references, each removed on another branch. Delete an
/// entry when its fix lands: an entry that matches no reference fails the
/// test, so the list can only shrink.
const ALLOWED: &[Allowed] = &[];

fn layer_of(krate: &Crate, module: &str) -> Option<usize> {
    krate
        .layers
        .iter()
        .position(|(mods, _)| mods.contains(&module))
}

/// Whether `module` belongs to a crate below `krate` (Cargo keeps those
/// references downward).
fn below(krate: &Crate, module: &str) -> bool {
    LAYERS
        .iter()
        .take_while(|c| c.name != krate.name)
        .any(|c| layer_of(c, module).is_some())
}

// ---- reading the sources ----------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

/// Rust tokens, as far as paths need them: comments, string, char and
/// number literals are dropped, lifetimes are not mistaken for chars.
fn tokenize(src: &str) -> Vec<Token> {
    let s: Vec<char> = src.chars().collect();
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    let is_ident_start = |c: char| c == '_' || c.is_alphabetic();
    let is_ident = |c: char| c == '_' || c.is_alphanumeric();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Skips a quoted literal whose opening quote is at `i` (escapes count
    // unless `raw`); returns the index after it.
    let skip_quoted = |mut i: usize, hashes: usize, raw: bool, line: &mut usize| -> usize {
        i += 1;
        while i < s.len() {
            match s[i] {
                '\n' => *line += 1,
                '\\' if !raw => {
                    if at(i + 1) == '\n' {
                        *line += 1;
                    }
                    i += 1;
                }
                '"' if (1..=hashes).all(|k| at(i + k) == '#') => return i + 1 + hashes,
                _ => {}
            }
            i += 1;
        }
        i
    };
    while i < s.len() {
        let c = s[i];
        let push = |out: &mut Vec<Token>, tok| out.push(Token { tok, line });
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(s[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_quoted(i, 0, false, &mut line);
        } else if c == '\'' {
            if at(i + 1) == '\\' {
                // An escaped char literal: '\n', '\'', '\u{1F600}'.
                i += 3;
                while i < s.len() && s[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime or label: its name is read as an identifier.
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < s.len() && is_ident(s[i]) {
                i += 1;
            }
        } else if is_ident_start(c) {
            let start = i;
            while i < s.len() && is_ident(s[i]) {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
            let str_prefix = matches!(word.as_str(), "b" | "c") || raw_prefix;
            if str_prefix && at(i) == '"' {
                i = skip_quoted(i, 0, raw_prefix, &mut line);
            } else if raw_prefix && at(i) == '#' {
                let hashes = (i..s.len()).take_while(|&k| s[k] == '#').count();
                if at(i + hashes) == '"' {
                    i = skip_quoted(i + hashes, hashes, true, &mut line);
                } else if word == "r" && hashes == 1 && is_ident_start(at(i + 1)) {
                    // A raw identifier, r#name.
                    let start = i + 1;
                    i = start;
                    while i < s.len() && is_ident(s[i]) {
                        i += 1;
                    }
                    push(&mut out, Tok::Ident(s[start..i].iter().collect()));
                } else {
                    push(&mut out, Tok::Ident(word));
                }
            } else {
                push(&mut out, Tok::Ident(word));
            }
        } else {
            let tok = match c {
                ':' if at(i + 1) == ':' => {
                    i += 1;
                    Tok::PathSep
                }
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                '*' => Tok::Star,
                _ => Tok::Other,
            };
            push(&mut out, tok);
            i += 1;
        }
    }
    out
}

/// A reference from a source line to a top-level module (`*` for a glob
/// over the crate root, `crate as` for an alias of the crate).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    line: usize,
    to: String,
}

/// The top-level modules `tokens` refer to. `module_path` is the file's
/// module path (`["read", "tasklog", "recorded"]`); `lib_name` is the
/// library's name when the file belongs to the binary.
fn references(tokens: &[Token], module_path: &[&str], lib_name: Option<&str>) -> Vec<Reference> {
    let ident = |k: usize| match tokens.get(k).map(|t| &t.tok) {
        Some(Tok::Ident(w)) => Some(w.as_str()),
        _ => None,
    };
    let is = |k: usize, tok: Tok| tokens.get(k).map(|t| &t.tok) == Some(&tok);
    let mut out = Vec::new();
    // Inline `mod name { … }` blocks: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    for k in 0..tokens.len() {
        match &tokens[k].tok {
            Tok::Open => {
                depth += 1;
                if k >= 2 && ident(k - 2) == Some("mod") {
                    if let Some(name) = ident(k - 1) {
                        inline.push((name.to_string(), depth));
                    }
                }
                continue;
            }
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                continue;
            }
            _ => {}
        }
        let Some(word) = ident(k) else { continue };
        let line = tokens[k].line;
        let starts_path = k == 0 || !is(k - 1, Tok::PathSep);
        if !starts_path {
            continue;
        }
        if word == "crate" && ident(k + 1) == Some("as") {
            out.push(Reference {
                line,
                to: "crate as".into(),
            });
            continue;
        }
        // Where the path's segment after the crate root starts, if it gets there.
        let root_next = if (word == "crate" || Some(word) == lib_name) && is(k + 1, Tok::PathSep) {
            Some(k + 2)
        } else if word == "super" && is(k + 1, Tok::PathSep) {
            let mut supers = 0;
            let mut j = k;
            while ident(j) == Some("super") && is(j + 1, Tok::PathSep) {
                supers += 1;
                j += 2;
            }
            let here = module_path.len() + inline.len();
            (supers == here).then_some(j)
        } else {
            None
        };
        let Some(j) = root_next else { continue };
        match tokens.get(j).map(|t| &t.tok) {
            Some(Tok::Ident(name)) if name != "self" => out.push(Reference {
                line,
                to: name.clone(),
            }),
            Some(Tok::Star) => out.push(Reference {
                line,
                to: "*".into(),
            }),
            Some(Tok::Open) => {
                // `{a, b::{c, d}, self}`: the first segment of each item.
                let mut level = 0usize;
                let mut item_start = true;
                for t in &tokens[j..] {
                    match &t.tok {
                        Tok::Open => {
                            level += 1;
                            item_start = level == 1;
                        }
                        Tok::Close => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        Tok::Comma => item_start = level == 1,
                        Tok::Ident(name) if item_start => {
                            if name != "self" {
                                out.push(Reference {
                                    line: t.line,
                                    to: name.clone(),
                                });
                            }
                            item_start = false;
                        }
                        Tok::Star if item_start => {
                            out.push(Reference {
                                line: t.line,
                                to: "*".into(),
                            });
                            item_start = false;
                        }
                        _ => item_start = false,
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The file modules a crate root declares (`mod x;`, `pub mod x;`; not
/// inline `mod tests { … }`).
fn declared_modules(root: &str) -> BTreeSet<String> {
    let tokens = tokenize(root);
    (1..tokens.len())
        .filter(|&k| tokens[k - 1].tok == Tok::Ident("mod".into()))
        .filter(|&k| tokens.get(k + 1).map(|t| &t.tok) != Some(&Tok::Open))
        .filter_map(|k| match &tokens[k].tok {
            Tok::Ident(name) => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// One file's place in the crate: its top-level module and module path.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

/// The crate's root files (`lib.rs`, `main.rs`) that exist.
fn crate_roots(krate: &Crate) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate.dir)
        .join("src");
    ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .filter(|p| p.exists())
        .collect()
}

/// Every reference from one top-level module of `krate` to another, in
/// file order: (file relative to the workspace root, line, from, to).
fn crate_references(krate: &Crate) -> Vec<(String, usize, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate.dir)
        .join("src");
    let read = |p: &Path| {
        fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
    };
    let main = src.join("main.rs");
    let mut bin_modules = if main.exists() {
        declared_modules(&read(&main))
    } else {
        BTreeSet::new()
    };
    bin_modules.insert("main".into());
    let lib_name = krate.name.replace('-', "_");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src/");
        if relative == Path::new("lib.rs") {
            continue;
        }
        let path = module_path(relative);
        let from = if relative == Path::new("main.rs") {
            "main".to_string()
        } else {
            path[0].clone()
        };
        let in_bin = bin_modules.contains(&from);
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let tokens = tokenize(&read(&file));
        let shown = Path::new(krate.dir)
            .join("src")
            .join(relative)
            .to_string_lossy()
            .trim_start_matches("./")
            .replace('\\', "/");
        for r in references(&tokens, &path, in_bin.then_some(lib_name.as_str())) {
            if r.to != from {
                out.push((shown.clone(), r.line, from.clone(), r.to));
            }
        }
    }
    out
}

// ---- the checks ---------------------------------------------------------

#[test]
fn layers_only_look_down() {
    let mut problems = Vec::new();
    let mut used_allowances = BTreeSet::new();
    for krate in LAYERS {
        check_crate(krate, &mut problems, &mut used_allowances);
    }
    for (k, a) in ALLOWED.iter().enumerate() {
        if !used_allowances.contains(&k) {
            problems.push(format!(
                "ALLOWED entry {} → {} ({}) matches no reference any more: delete it",
                a.file, a.to, a.why
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} layering problem(s) (layers bottom → top: {}):\n  {}",
        problems.len(),
        LAYERS
            .iter()
            .map(|c| format!(
                "{}: {}",
                c.name,
                c.layers
                    .iter()
                    .map(|(m, _)| m.join(" "))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ))
            .collect::<Vec<_>>()
            .join("; "),
        problems.join("\n  ")
    );
}

/// The layer problems of one crate's modules.
fn check_crate(krate: &Crate, problems: &mut Vec<String>, used_allowances: &mut BTreeSet<usize>) {
    let roots = crate_roots(krate);
    assert!(
        !roots.is_empty(),
        "{} has no src/lib.rs or src/main.rs",
        krate.dir
    );
    let mut declared: BTreeSet<String> = roots
        .iter()
        .flat_map(|f| declared_modules(&fs::read_to_string(f).unwrap()))
        .collect();
    if roots.iter().any(|f| f.ends_with("main.rs")) {
        declared.insert("main".to_string());
    }
    let refs = crate_references(krate);
    let modules: BTreeSet<&String> = declared.iter().chain(refs.iter().map(|r| &r.2)).collect();
    for module in modules {
        if layer_of(krate, module).is_none() {
            problems.push(format!(
                "module `{module}` of {} has no layer: add it to LAYERS in tests/layers.rs and to docs/architecture.md",
                krate.name
            ));
        }
    }
    // Same-layer edges, for the cycle check: from → to → first reference.
    let mut sideways: BTreeMap<(String, String), String> = BTreeMap::new();
    for (file, line, from, to) in &refs {
        let at = format!("{file}:{line}");
        if to == "*" || to == "crate as" {
            problems.push(format!(
                "{at}: `{to}` hides which modules are used; name them"
            ));
            continue;
        }
        let Some(lf) = layer_of(krate, from) else {
            continue; // reported above
        };
        if below(krate, to) {
            continue;
        }
        let Some(lt) = layer_of(krate, to) else {
            if !declared.contains(to) {
                problems.push(format!("{at}: `{to}` is not a top-level module"));
            }
            continue;
        };
        if lt > lf {
            match ALLOWED.iter().position(|a| a.file == file && a.to == to) {
                Some(k) => {
                    used_allowances.insert(k);
                }
                None => problems.push(format!(
                    "{at}: `{from}` (layer {lf}) uses `{to}` (layer {lt}), a layer above it"
                )),
            }
        } else if lt == lf {
            sideways.entry((from.clone(), to.clone())).or_insert(at);
        }
    }
    for cycle in same_layer_cycles(&sideways) {
        let shown: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                format!(
                    "{} → {} ({})",
                    w[0],
                    w[1],
                    sideways[&(w[0].clone(), w[1].clone())]
                )
            })
            .collect();
        problems.push(format!(
            "cycle inside a layer of {}: {}",
            krate.name,
            shown.join(", ")
        ));
    }
}

/// Cycles among same-layer edges, each as a closed walk `[a, b, …, a]`,
/// one per strongly connected group of modules.
fn same_layer_cycles(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let next = |m: &str| -> Vec<String> {
        edges
            .keys()
            .filter(|(a, _)| a == m)
            .map(|(_, b)| b.clone())
            .collect()
    };
    // The shortest path from `from` to `to`, by breadth-first search.
    let path = |from: &str, to: &str| -> Option<Vec<String>> {
        let mut parent: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([from.to_string()]);
        while let Some(m) = queue.pop_front() {
            for n in next(&m) {
                if n == to {
                    let mut walk = vec![n, m.clone()];
                    let mut cur = m;
                    while cur != from {
                        cur = parent[&cur].clone();
                        walk.push(cur.clone());
                    }
                    walk.reverse();
                    return Some(walk);
                }
                if n != from && !parent.contains_key(&n) {
                    parent.insert(n.clone(), m.clone());
                    queue.push_back(n);
                }
            }
        }
        None
    };
    let modules: BTreeSet<&String> = edges.keys().map(|(a, _)| a).collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut cycles = Vec::new();
    for m in modules {
        if seen.contains(m) {
            continue;
        }
        if let Some(walk) = path(m, m) {
            seen.extend(walk.iter().cloned());
            cycles.push(walk);
        }
    }
    cycles
}

#[test]
fn the_docs_show_the_layer_table() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let doc = fs::read_to_string(&doc_path).expect("docs/architecture.md");
    let expected = layer_table();
    let block = doc
        .split_once("\n## Layers")
        .and_then(|(_, rest)| rest.split_once("```text\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block);
    assert_eq!(
        block,
        Some(expected.as_str()),
        "docs/architecture.md's `## Layers` section must show LAYERS as the first ```text block:\n{expected}"
    );
}

/// LAYERS as the docs show it: top crate and top layer first, as the
/// workspace reads from the binary down.
fn layer_table() -> String {
    let mut out = String::new();
    for krate in LAYERS.iter().rev() {
        let src = Path::new(krate.dir).join("src/");
        let src = src.to_string_lossy();
        out.push_str(&format!(
            "{} ({}): {}\n",
            krate.name,
            src.trim_start_matches("./"),
            krate.what
        ));
        for (k, (mods, what)) in krate.layers.iter().enumerate().rev() {
            out.push_str(&format!("{k:>2}  {:<34}{what}\n", mods.join(", ")));
        }
    }
    out
}

// ---- the reader, on known text -------------------------------------------

fn refs_in(src: &str, path: &[&str], lib: Option<&str>) -> Vec<String> {
    references(&tokenize(src), path, lib)
        .into_iter()
        .map(|r| format!("{}:{}", r.line, r.to))
        .collect()
}

#[test]
fn use_forms_and_inline_paths_are_found() {
    let src = r#"use crate::policy::Policy;
use crate::{pyjson::{self, Value}, read, self};
use crate::detect::{duplicate_query::{QueryCache, Seen}, Reason};
pub(crate) fn f() -> crate::model::Trace {
    let x = crate::engine::run(); crate::
        replay::go();
    macro_rules! m { () => { $crate::analyze::x() } }
}
"#;
    assert_eq!(
        refs_in(src, &["parse"], None),
        [
            "1:policy",
            "2:pyjson",
            "2:read",
            "3:detect",
            "4:model",
            "5:engine",
            "5:replay",
            "7:analyze"
        ]
    );
}

#[test]
fn comments_strings_and_chars_are_not_references() {
    let src = r####"// use crate::engine;
/* use crate::engine; /* nested */ crate::engine */
/// [`crate::engine`]
let a = "crate::engine \" crate::engine";
let b = r#"crate::engine "# ; let c = br##"crate::engine"#  "##;
let q = '"'; let e = '\''; let u = '\u{22}'; fn f<'a>(x: &'a str) {}
let d = b"crate::engine";
use crate::read;
"####;
    assert_eq!(refs_in(src, &["parse"], None), ["8:read"]);
}

#[test]
fn super_paths_count_once_they_reach_the_crate_root() {
    let src = "use super::sibling;\nuse super::super::engine::x;\nmod tests { use super::super::super::detect; use super::*; }\n";
    // From src/read/tasklog/recorded.rs: two `super`s stay inside read/.
    assert!(refs_in(src, &["read", "tasklog", "recorded"], None).is_empty());
    // From src/read/tasklog.rs: the second line reaches the root, and so
    // does the third, one `super` more inside `mod tests`.
    assert_eq!(
        refs_in(src, &["read", "tasklog"], None),
        ["2:engine", "3:detect"]
    );
    // From src/read.rs: `super::` is the root; in `mod tests` it takes two.
    assert_eq!(refs_in(src, &["read"], None), ["1:sibling"]);
    assert_eq!(
        refs_in("mod tests { use super::super::x; }", &["read"], None),
        ["1:x"]
    );
}

#[test]
fn the_binary_refers_to_the_library_by_name() {
    let src = "use mirotrace::commands::run;\nuse crate::cli::Args;\nuse other::mirotrace::x;\n";
    assert_eq!(
        refs_in(src, &[], Some("mirotrace")),
        ["1:commands", "2:cli"]
    );
    assert_eq!(refs_in(src, &["x"], None), ["2:cli"]);
}

#[test]
fn globs_and_aliases_of_the_crate_root_are_reported() {
    assert_eq!(
        refs_in(
            "use crate::*;\nuse crate::{*, a};\nuse crate as c;\n",
            &["x"],
            None
        ),
        ["1:*", "2:*", "2:a", "3:crate as"]
    );
}

#[test]
fn cycles_are_found_once_per_group() {
    let edges: BTreeMap<(String, String), String> = [
        ("report", "diff"),
        ("diff", "keywords"),
        ("keywords", "report"),
        ("metrics", "report"),
    ]
    .into_iter()
    .map(|(a, b)| ((a.to_string(), b.to_string()), format!("{a}.rs:1")))
    .collect();
    assert_eq!(
        same_layer_cycles(&edges),
        [vec!["diff", "keywords", "report", "diff"]]
    );
    let acyclic: BTreeMap<_, _> = edges
        .into_iter()
        .filter(|((a, _), _)| a != "keywords")
        .collect();
    assert!(same_layer_cycles(&acyclic).is_empty());
}
