//! Unsafe code and dependencies, checked by the normal test command
//! without extra tools (no cargo-deny, no advisory database: neither can be installed or
//! fetched here).
//!
//! * `unsafe` appears only in the documented modules: `onnx-light/src/field/aligned.rs`
//!   (hand-allocated aligned buffers), `onnx-light/src/field/string.rs` (the 16-byte
//!   `Str`: borrowed, inline or heap text packed in two words), `onnx-light/src/io/mmap.rs`
//!   (the one file mapping, and `io::load_mapped`, the `unsafe fn` that reaches it), and
//!   the two callers of that function that vouch for a map: `onnx-light-cli/src/mapped.rs`
//!   (the tour's private copy) and `onnx-light-python/src/mapped.rs` (`no_copy=True`).
//!   Each use is preceded by a `// SAFETY:` comment; those modules are the only ones that
//!   `allow(unsafe_code)`; the workspace lint `unsafe_code = "deny"` stays in the root
//!   `Cargo.toml` and every crate inherits it. (The test and bench crates are test code,
//!   outside this rule: their mapped loads go through `tests/src/mapped.rs`, and the
//!   counting allocator of `memory_bounds.rs` is theirs.)
//! * Every package in the normal and build dependency graph of the published crates
//!   (`onnx-light`, `onnx-light-derive`, `onnx-light-cli`) has a license expression
//!   satisfiable from [`ALLOWED_LICENSES`]. Dev-dependencies and the unpublished
//!   `onnx-light-tests` / `onnx-light-bench` crates are excluded: they are not
//!   distributed with the library or the tool.
//! * Duplicate versions in that graph are listed in [`KNOWN_DUPLICATES`] with the reason;
//!   any other duplicate fails the test.
//! * The library's test hooks (feature `test-hooks`: a fixed salt and IV, a cheap
//!   stand-in for PBKDF2, save fault injection) are on only in builds of tests: `cargo
//!   tree` resolves `onnx-light` without them for the workspace, its default members and
//!   the tool, and with them once dev-dependencies are in.
//!
//! The graph is the host platform's (`cargo metadata --filter-platform <host>`), because
//! an offline machine has not downloaded the packages of other targets (e.g. wasm-only
//! crates), which `cargo metadata` would otherwise need.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace_root() -> PathBuf {
    onnx_light_tests::python::workspace_root()
}

// ---- unsafe ------------------------------------------------------------------------------

/// The modules allowed to contain `unsafe`, relative to the workspace root.
const UNSAFE_MODULES: [&str; 5] = [
    "onnx-light-cli/src/mapped.rs",
    "onnx-light-python/src/mapped.rs",
    "onnx-light/src/field/aligned.rs",
    "onnx-light/src/field/string.rs",
    "onnx-light/src/io/mmap.rs",
];

/// The crates' sources whose `unsafe` is checked.
const SOURCE_DIRS: [&str; 4] = [
    "onnx-light/src",
    "onnx-light-derive/src",
    "onnx-light-cli/src",
    "onnx-light-python/src",
];

/// `src` with comments, string and character literals replaced by spaces (newlines
/// kept), so that only code remains, at the same line numbers.
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            loop {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0
                || !is_ident(c[i - 1])
                || (c[i - 1] == 'b' && (i == 1 || !is_ident(c[i - 2]))))
        {
            // A raw string r"..." / r#"..."# (also after a `b`).
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            j += 1;
            while j < c.len() {
                if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.extend(c[i..j].iter().map(|&ch| blank(ch)));
            i = j;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(c.len());
            out.extend(c[i..end].iter().map(|&ch| blank(ch)));
            i = end;
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let lit_end = if next == Some('\\') {
                (i + 3..c.len()).find(|&j| c[j] == '\'')
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match lit_end {
                Some(j) => {
                    out.extend(c[i..=j].iter().map(|&ch| blank(ch)));
                    i = j + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// 1-based line numbers of the word `word` in `code`.
fn word_lines(code: &str, word: &str) -> Vec<usize> {
    let ident = |ch: Option<char>| ch.is_some_and(|c| c.is_alphanumeric() || c == '_');
    code.lines()
        .enumerate()
        .filter(|(_, line)| {
            line.match_indices(word).any(|(at, _)| {
                !ident(line[..at].chars().next_back())
                    && !ident(line[at + word.len()..].chars().next())
            })
        })
        .map(|(n, _)| n + 1)
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_code_scanner_sees_through_comments_strings_and_lifetimes() {
    let src = "// unsafe\nlet s = \"unsafe\"; /* unsafe /* nested */ unsafe */\nlet r = (r#\"unsafe\"#, br#\"unsafe\"#, r#type);\nfn f<'a>(x: &'a u8) -> char { let _ = b'\\''; 'u' }\nunsafe { }\nlet unsafe_code = 1;";
    let code = code_only(src);
    assert_eq!(code.lines().count(), src.lines().count());
    assert_eq!(word_lines(&code, "unsafe"), vec![5]);
    assert!(code.contains("fn f<'a>(x: &'a u8)"));
}

#[test]
fn unsafe_code_is_confined_to_the_documented_modules_each_use_argued_by_a_safety_comment() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "scanned {} files", files.len());
    let mut with_unsafe = BTreeSet::new();
    let mut with_allow = BTreeSet::new();
    let mut unargued = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let src = std::fs::read_to_string(file).unwrap();
        let code = code_only(&src);
        let lines: Vec<&str> = src.lines().collect();
        let unsafe_lines = word_lines(&code, "unsafe");
        if !unsafe_lines.is_empty() {
            with_unsafe.insert(rel.clone());
        }
        let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.contains("allow(unsafe_code)") {
            with_allow.insert(rel.clone());
        }
        // The comment lines right above each use must contain "SAFETY:".
        for n in unsafe_lines {
            let above: Vec<&str> = lines[..n - 1]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| l.starts_with("//"))
                .collect();
            if !above.iter().any(|l| l.starts_with("// SAFETY:")) {
                unargued.push(format!("{rel}:{n}: {}", lines[n - 1].trim()));
            }
        }
    }
    let allowed: BTreeSet<String> = UNSAFE_MODULES.iter().map(|s| s.to_string()).collect();
    assert_eq!(with_unsafe, allowed, "files containing `unsafe`");
    assert_eq!(with_allow, allowed, "files that allow unsafe_code");
    assert!(
        unargued.is_empty(),
        "unsafe without a SAFETY comment:\n{}",
        unargued.join("\n")
    );
    // The allowances are module-level inner attributes, next to the module docs that
    // state the hazards, not crate-wide.
    for m in UNSAFE_MODULES {
        let src = std::fs::read_to_string(root.join(m)).unwrap();
        assert!(src.contains("#![allow(unsafe_code)]"), "{m}");
    }
    for lib in [
        "onnx-light/src/lib.rs",
        "onnx-light-derive/src/lib.rs",
        "onnx-light-cli/src/main.rs",
        "onnx-light-python/src/lib.rs",
    ] {
        let code = code_only(&std::fs::read_to_string(root.join(lib)).unwrap());
        assert!(
            !code.contains("unsafe_code"),
            "{lib} must not change the unsafe_code lint"
        );
    }
}

/// The `[section]` of a TOML file as `key = value` lines (enough for Cargo manifests).
fn toml_section(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
        } else if inside {
            if let Some((k, v)) = line.split_once('=') {
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    out
}

#[test]
fn the_workspace_denies_unsafe_code_and_every_published_crate_inherits_it() {
    let root = workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let lints = toml_section(&manifest, "workspace.lints.rust");
    assert!(
        lints.contains(&("unsafe_code".to_string(), "\"deny\"".to_string())),
        "[workspace.lints.rust] must keep unsafe_code = \"deny\": {lints:?}"
    );
    for krate in ["onnx-light", "onnx-light-derive", "onnx-light-cli"] {
        let m = std::fs::read_to_string(root.join(krate).join("Cargo.toml")).unwrap();
        assert!(
            toml_section(&m, "lints").contains(&("workspace".to_string(), "true".to_string())),
            "{krate} must inherit the workspace lints"
        );
    }
}

// ---- dependencies --------------------------------------------------------------------------

/// Licenses accepted for code distributed with the published crates: permissive licenses
/// that only ask for attribution (and, for Apache-2.0, a NOTICE and a patent grant),
/// all compatible with the crates' own `MIT OR Apache-2.0`. Copyleft licenses, weak ones
/// included (MPL-2.0, LGPL), are left out on purpose: none is needed today, and adding
/// one should be a reviewed decision (this test failing), not an accident.
const ALLOWED_LICENSES: [&str; 13] = [
    "MIT",
    "MIT-0",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "0BSD",
    "ISC",
    "Zlib",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "CC0-1.0",
    "Unlicense",
    "BSL-1.0",
];

/// Crates present in two versions, and why that is accepted for now.
const KNOWN_DUPLICATES: [(&str, &str); 6] = [
    // sha1 0.10 (external-data checksums) is on the RustCrypto `digest` 0.10 stack, while
    // sha2 0.11, hmac 0.13 and pbkdf2 0.13 (encryption) are on `digest` 0.11. Moving to
    // sha1 0.11 would remove these four.
    (
        "digest",
        "sha1 0.10 vs sha2/hmac/pbkdf2 (digest 0.10 and 0.11)",
    ),
    ("block-buffer", "via digest 0.10 and 0.11"),
    ("crypto-common", "via digest 0.10 and 0.11"),
    (
        "cpufeatures",
        "sha1 0.10 uses 0.2; aes 0.9 and sha2 0.11 use 0.3",
    ),
    // Feature `remote` (object_store, on in the tool): rand 0.10 (also the crypto
    // module's) uses getrandom 0.4, while ring 0.17, which `cargo metadata` resolves
    // under rustls-webpki there, uses 0.2.
    (
        "getrandom",
        "rand 0.10 uses 0.4; ring 0.17 (under rustls-webpki, feature `remote`) uses 0.2",
    ),
    // onnx-light-derive and zerocopy-derive (via rand) use syn 2; bytemuck_derive,
    // clap_derive and thiserror-impl use syn 3. Build-time only (proc macros).
    (
        "syn",
        "proc macros on syn 2 (onnx-light-derive, zerocopy-derive) and syn 3 (others)",
    ),
];

/// Runs `cargo args` in the workspace offline first (there is no network here), and
/// online only when a package is missing locally; panics unless one succeeds.
fn cargo_offline_first(args: &[&str]) -> std::process::Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(workspace_root()).args(args);
        if offline {
            cmd.arg("--offline");
        }
        cmd.output().unwrap()
    };
    let mut out = run(true);
    if !out.status.success() {
        out = run(false);
    }
    assert!(
        out.status.success(),
        "cargo {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn cargo_metadata() -> Value {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc).arg("-vV").output().unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host");
    let out = cargo_offline_first(&[
        "metadata",
        "--format-version",
        "1",
        "--locked",
        "--filter-platform",
        host,
    ]);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The published workspace crates and every package they depend on through normal or
/// build dependencies (any target of the host platform), by package id.
fn published_graph(meta: &Value) -> (Vec<String>, BTreeMap<String, Value>) {
    let packages: BTreeMap<String, Value> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap().to_string(), p.clone()))
        .collect();
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    // `publish = false` shows as an empty list of registries.
    let roots: Vec<String> = members
        .iter()
        .filter(|id| {
            packages[**id]["publish"]
                .as_array()
                .is_none_or(|r| !r.is_empty())
        })
        .map(|id| id.to_string())
        .collect();
    let nodes: BTreeMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let mut seen = BTreeMap::new();
    let mut stack = roots.clone();
    while let Some(id) = stack.pop() {
        if seen.contains_key(&id) {
            continue;
        }
        seen.insert(id.clone(), packages[&id].clone());
        for dep in nodes[id.as_str()]["deps"].as_array().unwrap() {
            let kinds = dep["dep_kinds"].as_array().unwrap();
            if kinds.iter().any(|k| k["kind"].as_str() != Some("dev")) {
                stack.push(dep["pkg"].as_str().unwrap().to_string());
            }
        }
    }
    let names = roots
        .iter()
        .map(|id| packages[id]["name"].as_str().unwrap().to_string())
        .collect();
    (names, seen)
}

/// True when the SPDX expression can be satisfied with allowed licenses: `OR` needs one
/// side, `AND` both; `X WITH exception` is as acceptable as `X` (exceptions only add
/// permissions); the legacy `A/B` means `A OR B`.
fn license_ok(expression: &str) -> bool {
    let spaced = expression
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace('/', " OR ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    fn or(t: &[&str], i: &mut usize) -> bool {
        let mut ok = and(t, i);
        while t.get(*i) == Some(&"OR") {
            *i += 1;
            ok |= and(t, i);
        }
        ok
    }
    fn and(t: &[&str], i: &mut usize) -> bool {
        let mut ok = atom(t, i);
        while t.get(*i) == Some(&"AND") {
            *i += 1;
            ok &= atom(t, i);
        }
        ok
    }
    fn atom(t: &[&str], i: &mut usize) -> bool {
        let ok = if t.get(*i) == Some(&"(") {
            *i += 1;
            let ok = or(t, i);
            assert_eq!(t.get(*i), Some(&")"), "unbalanced license expression");
            ok
        } else {
            let id = t.get(*i).copied().unwrap_or("");
            ALLOWED_LICENSES.contains(&id.trim_end_matches('+'))
        };
        *i += 1;
        if t.get(*i) == Some(&"WITH") {
            *i += 2;
        }
        ok
    }
    let mut i = 0;
    let ok = or(&tokens, &mut i);
    ok && i == tokens.len()
}

#[test]
fn the_license_expression_evaluator_follows_spdx() {
    assert!(license_ok("MIT"));
    assert!(license_ok("MIT OR Apache-2.0"));
    assert!(license_ok("MIT/Apache-2.0"));
    assert!(license_ok("(MIT OR Apache-2.0) AND Unicode-3.0"));
    assert!(license_ok("Apache-2.0 WITH LLVM-exception OR MIT"));
    assert!(license_ok("GPL-3.0 OR MIT"));
    assert!(!license_ok("GPL-3.0"));
    assert!(!license_ok("MIT AND GPL-3.0"));
    assert!(!license_ok("MPL-2.0"));
    assert!(!license_ok("(MIT OR Apache-2.0) AND LGPL-2.1"));
    assert!(!license_ok(""));
}

#[test]
fn every_dependency_of_the_published_crates_has_an_allowed_license() {
    let meta = cargo_metadata();
    let (roots, graph) = published_graph(&meta);
    let mut roots = roots;
    roots.sort();
    assert_eq!(roots, ["onnx-light", "onnx-light-cli", "onnx-light-derive"]);
    assert!(graph.len() > 20, "{} packages", graph.len());
    let mut refused = Vec::new();
    for p in graph.values() {
        let name = p["name"].as_str().unwrap();
        let version = p["version"].as_str().unwrap();
        match p["license"].as_str() {
            Some(l) if license_ok(l) => {}
            Some(l) => refused.push(format!("{name} {version}: {l}")),
            None => refused.push(format!(
                "{name} {version}: no SPDX expression (license file {:?})",
                p["license_file"]
            )),
        }
    }
    assert!(
        refused.is_empty(),
        "licenses outside the allowlist:\n{}",
        refused.join("\n")
    );
}

#[test]
fn the_published_crates_have_no_duplicate_dependencies_beyond_the_known_ones() {
    let meta = cargo_metadata();
    let (_, graph) = published_graph(&meta);
    let mut versions: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in graph.values() {
        versions
            .entry(p["name"].as_str().unwrap())
            .or_default()
            .insert(p["version"].as_str().unwrap());
    }
    let duplicates: BTreeMap<&str, &BTreeSet<&str>> = versions
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(k, v)| (*k, v))
        .collect();
    for (name, v) in &duplicates {
        println!("duplicate: {name} {v:?}");
    }
    let known: BTreeSet<&str> = KNOWN_DUPLICATES.iter().map(|(n, _)| *n).collect();
    let unexpected: Vec<_> = duplicates
        .iter()
        .filter(|(n, _)| !known.contains(*n))
        .map(|(n, v)| format!("{n} {v:?}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "new duplicate versions (remove them, or list them in KNOWN_DUPLICATES with the reason):\n{}",
        unexpected.join("\n")
    );
    // A fixed duplicate must leave the list too, so that it stays true.
    let stale: Vec<_> = known
        .iter()
        .filter(|n| !duplicates.contains_key(*n))
        .collect();
    assert!(
        stale.is_empty(),
        "no longer duplicated, remove from KNOWN_DUPLICATES: {stale:?}"
    );
}

// ---- test hooks ------------------------------------------------------------------------

/// The features `cargo tree` resolves for `onnx-light` with `args` (offline, as above).
fn library_features(args: &[&str]) -> BTreeSet<String> {
    let mut tree = vec!["tree", "--locked", "-i", "onnx-light", "--prefix", "none"];
    tree.extend_from_slice(args);
    let out = cargo_offline_first(&tree);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("onnx-light feature \""))
        .filter_map(|l| l.split('"').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn builds_that_are_not_tests_resolve_the_library_without_its_test_hooks() {
    for args in [
        &["-e", "features,no-dev"][..],
        &["-e", "features,no-dev", "--workspace"],
        &["-e", "features,no-dev", "-p", "onnx-light-cli"],
        &["-e", "features,no-dev", "-p", "onnx-light-python"],
    ] {
        let features = library_features(args);
        assert!(features.contains("default"), "{args:?}: {features:?}");
        assert!(!features.contains("test-hooks"), "{args:?}: {features:?}");
    }
    // A build of the tests has them (and this test looks for the right name).
    let tests = library_features(&["-e", "features"]);
    assert!(tests.contains("test-hooks"), "{tests:?}");
}
