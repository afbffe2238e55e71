//! No import cycle between the modules of any crate in the workspace.
//! For each crate (the binary in `src/`, every `crates/*/src`)
//! this walks the module tree from its root the way rustc does (`mod x;`,
//! `#[path]`, inline `mod x { … }`), reads every `use crate::…`,
//! `use super::…`, `use self::…` tree (groups expanded) and every inline
//! `crate::…` / `super::…` path outside comments and string literals, and
//! builds the graph between *sibling* modules: a use of `a::x::y` from
//! `a::z::w` is an edge `a::z → a::x`, the two children of their closest
//! common ancestor. An edge to an ancestor or a descendant is no cycle. The
//! test fails listing every strongly connected group of siblings, with one
//! cycle through it and the lines that make each of its edges.
//!
//! Std only: no parser crate, so it reads tokens, not syntax trees. Paths
//! through re-exports (`use crate::Name` where the root re-exports `Name`)
//! resolve to the module that re-exports them, as rustc's name lookup does.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Cycles known and left to another issue, each with its reason. An entry
/// is the sorted member list of a strongly connected group, `crate: a, b`.
/// An entry that no longer matches a cycle fails the test too, so the list
/// only shrinks.
const ALLOWED: &[(&str, &str)] = &[];

/// A module path from the crate root: `["cmd", "run"]`; empty for the root.
type ModPath = Vec<String>;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// One token with the line it starts on.
type Spanned = (Token, usize);

/// Splits Rust source into identifiers, `::` and single punctuation,
/// dropping comments, string, byte-string, raw-string and char literals.
fn tokenize(source: &str) -> Vec<Spanned> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r')) && {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let mut j = start;
            while at(j) == '#' {
                j += 1;
            }
            at(j) == '"'
        } {
            // Raw string: r"…", r#"…"#, br"…".
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|k| at(j + 1 + k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    line += 1;
                }
                j += 1;
            }
            i = j;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    j += 1;
                }
                if at(j) == '\n' {
                    line += 1;
                }
                j += 1;
            }
            i = j + 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if at(i + 1) == '\\' {
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push((
                Token::Ident(word.trim_start_matches("r#").to_string()),
                line,
            ));
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push((Token::PathSep, line));
            i += 2;
        } else {
            tokens.push((Token::Punct(c), line));
            i += 1;
        }
    }
    tokens
}

/// One import found in a file: the absolute path it names and its line.
struct Import {
    path: ModPath,
    line: usize,
}

/// A module's file, and the imports written in it (inline child modules
/// such as `mod tests { … }` count as part of the file's module).
struct ModuleFile {
    file: PathBuf,
    imports: Vec<Import>,
}

fn ident(token: Option<&Spanned>) -> Option<&str> {
    match token {
        Some((Token::Ident(word), _)) => Some(word),
        _ => None,
    }
}

/// Resolves the leading `crate`/`super`/`self` of `segments` against the
/// module `here`; `None` for paths that name another crate or `std`.
fn absolute(here: &[String], segments: &[String]) -> Option<ModPath> {
    let mut base: ModPath = match segments.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => here.to_vec(),
        _ => return None,
    };
    let mut rest = if segments[0] == "crate" {
        &segments[1..]
    } else {
        segments
    };
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Expands a `use` tree starting at `tokens[*i]` into its leaf paths, up to
/// the closing `;` (or the `}` / `,` that ends a group member).
fn use_tree(tokens: &[Spanned], i: &mut usize, prefix: &[String], out: &mut Vec<(ModPath, usize)>) {
    let mut path = prefix.to_vec();
    let line = tokens.get(*i).map(|t| t.1).unwrap_or(0);
    while let Some((token, _)) = tokens.get(*i) {
        match token {
            Token::Ident(word) if word == "as" => {
                *i += 2;
            }
            Token::Ident(word) => {
                path.push(word.clone());
                *i += 1;
            }
            Token::PathSep => *i += 1,
            Token::Punct('*') => *i += 1,
            Token::Punct('{') => {
                *i += 1;
                loop {
                    match tokens.get(*i) {
                        Some((Token::Punct('}'), _)) => {
                            *i += 1;
                            break;
                        }
                        Some((Token::Punct(','), _)) => *i += 1,
                        Some(_) => use_tree(tokens, i, &path, out),
                        None => break,
                    }
                }
                return;
            }
            _ => break,
        }
    }
    out.push((path, line));
}

/// Reads one file: its imports (attached to `here`) and the child modules
/// it declares, which are queued in `pending` with their files.
fn scan_file(file: &Path, here: &ModPath, pending: &mut Vec<(ModPath, PathBuf)>) -> ModuleFile {
    let source = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let tokens = tokenize(&source);
    let file_name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    // Where `mod x;` looks for x: beside a mod.rs/lib.rs/main.rs, else in
    // a folder named after this file.
    let child_dir = if matches!(file_name, "mod.rs" | "lib.rs" | "main.rs") {
        dir.clone()
    } else {
        dir.join(file.file_stem().and_then(|s| s.to_str()).unwrap_or(""))
    };
    let mut imports = Vec::new();
    // Inline modules open in this file: (module path, brace depth inside).
    let mut inline: Vec<(ModPath, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut path_attr: Option<String> = None;
    let mut i = 0;
    while i < tokens.len() {
        let current: ModPath = inline.last().map(|m| m.0.clone()).unwrap_or(here.clone());
        match &tokens[i].0 {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if inline.last().map(|m| m.1) == Some(depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Punct('#') => {
                // #[path = "x.rs"]: read from the raw source line, since the
                // tokenizer drops string literals.
                let line = tokens[i].1;
                if ident(tokens.get(i + 2)) == Some("path") {
                    let text = source.lines().nth(line - 1).unwrap_or("");
                    path_attr = text.split('"').nth(1).map(str::to_string);
                }
                i += 1;
            }
            Token::Ident(word) if word == "mod" => {
                let Some(name) = ident(tokens.get(i + 1)).map(str::to_string) else {
                    i += 1;
                    continue;
                };
                let mut child = current.clone();
                child.push(name.clone());
                match tokens.get(i + 2) {
                    Some((Token::Punct(';'), _)) => {
                        let child_file = match path_attr.take() {
                            Some(p) => dir.join(p),
                            None if inline.is_empty() => {
                                let flat = child_dir.join(format!("{name}.rs"));
                                if flat.exists() {
                                    flat
                                } else {
                                    child_dir.join(&name).join("mod.rs")
                                }
                            }
                            None => {
                                panic!("{}: file module inside an inline module", file.display())
                            }
                        };
                        pending.push((child, child_file));
                        i += 3;
                    }
                    Some((Token::Punct('{'), _)) => {
                        path_attr = None;
                        depth += 1;
                        inline.push((child, depth));
                        i += 3;
                    }
                    _ => i += 1,
                }
            }
            Token::Ident(word) if word == "use" => {
                i += 1;
                let mut leaves = Vec::new();
                use_tree(&tokens, &mut i, &[], &mut leaves);
                for (segments, line) in leaves {
                    if let Some(path) = absolute(&current, &segments) {
                        imports.push(Import { path, line });
                    }
                }
            }
            Token::Ident(word)
                if (word == "crate" || word == "super")
                    && tokens.get(i + 1).map(|t| &t.0) == Some(&Token::PathSep) =>
            {
                let line = tokens[i].1;
                let mut segments = vec![word.clone()];
                i += 1;
                while tokens.get(i).map(|t| &t.0) == Some(&Token::PathSep) {
                    match ident(tokens.get(i + 1)) {
                        Some(next) => segments.push(next.to_string()),
                        None => break,
                    }
                    i += 2;
                }
                if let Some(path) = absolute(&current, &segments) {
                    imports.push(Import { path, line });
                }
            }
            _ => i += 1,
        }
    }
    ModuleFile {
        file: file.to_path_buf(),
        imports,
    }
}

/// Every module of the crate rooted at `root` (lib.rs or main.rs), with its
/// imports; inline modules are known as modules but own no file.
fn crate_modules(root: &Path) -> BTreeMap<ModPath, ModuleFile> {
    let mut modules = BTreeMap::new();
    let mut pending = vec![(Vec::new(), root.to_path_buf())];
    while let Some((path, file)) = pending.pop() {
        let scanned = scan_file(&file, &path, &mut pending);
        modules.insert(path, scanned);
    }
    modules
}

/// The longest prefix of `path` that is a module of the crate.
fn owning_module(path: &[String], modules: &BTreeMap<ModPath, ModuleFile>) -> ModPath {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| modules.contains_key(prefix))
        .unwrap_or_default()
}

/// `from → to` lifted to the two children of their closest common
/// ancestor; `None` when one contains the other.
fn sibling_edge(from: &[String], to: &[String]) -> Option<(ModPath, ModPath)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common == from.len() || common == to.len() {
        return None;
    }
    Some((from[..=common].to_vec(), to[..=common].to_vec()))
}

/// An edge between siblings, with the `file:line` sites that make it.
type Graph = BTreeMap<ModPath, BTreeMap<ModPath, Vec<String>>>;

fn sibling_graph(modules: &BTreeMap<ModPath, ModuleFile>, workspace: &Path) -> Graph {
    let mut graph: Graph = BTreeMap::new();
    for (here, module) in modules {
        for import in &module.imports {
            let target = owning_module(&import.path, modules);
            if let Some((a, b)) = sibling_edge(here, &target) {
                let file = module.file.strip_prefix(workspace).unwrap_or(&module.file);
                graph
                    .entry(a)
                    .or_default()
                    .entry(b)
                    .or_default()
                    .push(format!(
                        "{}:{} uses {}",
                        file.display(),
                        import.line,
                        import.path.join("::")
                    ));
            }
        }
    }
    graph
}

/// Strongly connected groups of two or more modules (Tarjan's algorithm).
fn cycles(graph: &Graph) -> Vec<Vec<ModPath>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g ModPath, usize>,
        low: BTreeMap<&'g ModPath, usize>,
        stack: Vec<&'g ModPath>,
        on_stack: BTreeSet<&'g ModPath>,
        groups: Vec<Vec<ModPath>>,
    }
    fn visit<'g>(state: &mut State<'g>, node: &'g ModPath) {
        let n = state.index.len();
        state.index.insert(node, n);
        state.low.insert(node, n);
        state.stack.push(node);
        state.on_stack.insert(node);
        if let Some(next) = state.graph.get(node) {
            for target in next.keys() {
                let Some((target, _)) = state.graph.get_key_value(target) else {
                    continue; // a module that imports nothing closes no cycle
                };
                if !state.index.contains_key(target) {
                    visit(state, target);
                    let low = state.low[target].min(state.low[node]);
                    state.low.insert(node, low);
                } else if state.on_stack.contains(target) {
                    let low = state.index[target].min(state.low[node]);
                    state.low.insert(node, low);
                }
            }
        }
        if state.low[node] == state.index[node] {
            let mut group = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack.remove(top);
                group.push(top.clone());
                if top == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                state.groups.push(group);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.groups
}

/// One cycle through the group's first member, by breadth-first search
/// inside the group, as `a → b → … → a`.
fn one_cycle(graph: &Graph, group: &[ModPath]) -> Vec<ModPath> {
    let start = &group[0];
    let members: BTreeSet<&ModPath> = group.iter().collect();
    let mut came_from: BTreeMap<ModPath, ModPath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(&node).into_iter().flat_map(|m| m.keys()) {
            if !members.contains(next) {
                continue;
            }
            if next == start {
                let mut path = vec![start.clone(), node.clone()];
                let mut at = node;
                while let Some(prev) = came_from.get(&at) {
                    path.push(prev.clone());
                    at = prev.clone();
                }
                path.reverse();
                if path.len() > 1 && path[0] == path[1] {
                    path.remove(0);
                }
                path.dedup();
                return path;
            }
            if !came_from.contains_key(next) && next != start {
                came_from.insert(next.clone(), node.clone());
                queue.push_back(next.clone());
            }
        }
    }
    group.to_vec()
}

fn name(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}

/// `(crate name, root file)` for the binary and every library crate.
fn crate_roots(workspace: &Path) -> Vec<(String, PathBuf)> {
    let mut roots = vec![("stampede".to_string(), workspace.join("src/main.rs"))];
    let mut crates: Vec<PathBuf> = fs::read_dir(workspace.join("crates"))
        .expect("crates/ is readable")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|dir| dir.join("src/lib.rs").exists())
        .collect();
    crates.sort();
    for dir in crates {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        roots.push((name, dir.join("src/lib.rs")));
    }
    roots
}

/// Every cycle in every crate, as one report line per group with its
/// allow-list key.
fn workspace_cycles(workspace: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (krate, root) in crate_roots(workspace) {
        let modules = crate_modules(&root);
        let graph = sibling_graph(&modules, workspace);
        for group in cycles(&graph) {
            let key = format!(
                "{krate}: {}",
                group.iter().map(|m| name(m)).collect::<Vec<_>>().join(", ")
            );
            let cycle = one_cycle(&graph, &group);
            let mut report = format!(
                "{key}\n    for example {}",
                cycle
                    .iter()
                    .map(|m| name(m))
                    .collect::<Vec<_>>()
                    .join(" → ")
            );
            // Every edge inside the group, so one reading shows what to cut.
            for from in &group {
                for (to, sites) in graph.get(from).into_iter().flatten() {
                    if group.contains(to) {
                        report.push_str(&format!(
                            "\n    {} → {}: {}",
                            name(from),
                            name(to),
                            sites.join("; ")
                        ));
                    }
                }
            }
            found.push((key, report));
        }
    }
    found
}

#[test]
fn no_module_imports_a_sibling_that_imports_it_back() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = workspace_cycles(workspace);
    let allowed: BTreeSet<&str> = ALLOWED.iter().map(|(key, _)| *key).collect();
    let unexpected: Vec<&String> = found
        .iter()
        .filter(|(key, _)| !allowed.contains(key.as_str()))
        .map(|(_, report)| report)
        .collect();
    let found_keys: BTreeSet<&str> = found.iter().map(|(key, _)| key.as_str()).collect();
    let stale: Vec<&&str> = allowed
        .iter()
        .filter(|key| !found_keys.contains(**key))
        .collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "module import cycles:\n{}\nallow-list entries that match no cycle any more: {stale:?}",
        unexpected
            .iter()
            .map(|r| format!("  {r}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The binary's commands (`src/cmd/*`) are independent: what two of them
/// share lives outside `cmd/` (plan_args.rs, session.rs, repeat.rs, …), so
/// no command's module imports another's.
#[test]
fn no_command_imports_another_command() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = crate_modules(&workspace.join("src/main.rs"));
    let graph = sibling_graph(&modules, workspace);
    let between: Vec<String> = graph
        .iter()
        .filter(|(from, _)| from.len() == 2 && from[0] == "cmd")
        .flat_map(|(from, to)| {
            to.iter().map(move |(to, sites)| {
                format!("{} → {}: {}", name(from), name(to), sites.join("; "))
            })
        })
        .collect();
    assert!(
        between.is_empty(),
        "commands importing each other:\n  {}",
        between.join("\n  ")
    );
}

/// The checker itself: a made-up crate in a temporary folder with a cycle
/// through a `use` group and an inline path, and a parent/child pair that
/// is no cycle.
#[test]
fn the_checker_finds_a_cycle_through_groups_and_inline_paths() {
    let dir = std::env::temp_dir().join(format!("stampede-module-cycles-{}", std::process::id()));
    let src = dir.join("src");
    fs::create_dir_all(src.join("a")).expect("temp dir");
    fs::write(
        src.join("main.rs"),
        "mod a;\nmod b;\nmod c;\nfn main() {}\n",
    )
    .expect("write");
    fs::write(
        src.join("a/mod.rs"),
        "//! use crate::c::Nothing; (a comment)\nmod inner;\nuse crate::{b::{B}, c};\nuse self::inner::X;\n",
    )
    .expect("write");
    fs::write(
        src.join("a/inner.rs"),
        "use super::Y;\nconst S: &str = \"crate::c::Z\";\n",
    )
    .expect("write");
    fs::write(
        src.join("b.rs"),
        "pub struct B;\nfn f() -> crate::a::Y { todo!() }\n",
    )
    .expect("write");
    fs::write(src.join("c.rs"), "pub fn c() {}\n").expect("write");
    let modules = crate_modules(&src.join("main.rs"));
    let graph = sibling_graph(&modules, &dir);
    let groups = cycles(&graph);
    fs::remove_dir_all(&dir).ok();
    let a = vec!["a".to_string()];
    let b = vec!["b".to_string()];
    assert_eq!(groups, vec![vec![a.clone(), b.clone()]], "graph: {graph:?}");
    assert!(
        graph[&a].contains_key(&vec!["c".to_string()]),
        "a uses c through its group"
    );
    assert!(
        !graph.contains_key(&vec!["a".to_string(), "inner".to_string()]),
        "inner's use of its parent and its string literal are no edges"
    );
}
