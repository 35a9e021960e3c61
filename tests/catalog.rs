//! The catalogs in docs/ agree with the code.
//!
//! * docs/findings.md lists every finding code something can emit, and nothing else. Emitted
//!   codes come from the crates' own catalogs where they exist (`jackpot::CHECKS`,
//!   `rules_poker::codes::ALL`, the chemin de fer `Fault::ALL`), from the audit's `codes`
//!   constants that `auditor.rs` uses, from the security finding codes ledger-store records, and,
//!   for the rule engines, from a scan of their sources: every string literal in
//!   SCREAMING_SNAKE_CASE (`"RL_WRONG_PAYOUT"`) in `src/`, leaving out the simulators (`sim.rs`,
//!   `sim/`) and test modules (from a file's `#[cfg(test)] mod` on). Every such literal in
//!   an engine is a finding code; [`NOT_CODES`] lists any that is not.
//! * Severity, confidence and citation are checked where the code states them: the catalogs
//!   above, and in the engines' sources every `Violation::new("CODE", Severity::X, "citation"`.
//! * docs/events.md documents every payload of `EventBody` (events.proto) and of
//!   `LedgerRecordBody` (ledger.proto) in a heading of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// SCREAMING_SNAKE literals in the engines' sources that are not finding codes.
const NOT_CODES: &[&str] = &[];

/// The engine crates scanned for code literals (`rules-core` emits the settlement codes).
const ENGINE_CRATES: &[&str] = &[
    "rules-core",
    "rules-roulette",
    "rules-dice",
    "rules-blackjack",
    "rules-poker",
    "rules-poker-sem-descarte",
    "rules-baccarat",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// One row of a findings table: the code and its cells after the code.
struct Row {
    severity: String,
    confidence: String,
    /// Every cell between confidence and the last (the citation columns).
    citation: String,
}

/// Rows of docs/findings.md whose first cell is a backticked code.
fn documented() -> BTreeMap<String, Vec<Row>> {
    let text = read(&workspace().join("docs/findings.md"));
    let mut rows: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("| `") else {
            continue;
        };
        let cells: Vec<&str> = rest.split(" | ").map(str::trim).collect();
        assert!(
            cells.len() >= 5,
            "docs/findings.md: a row needs code, severity, confidence, citation and meaning: {line}"
        );
        let code = cells[0].trim_end_matches('`').to_string();
        rows.entry(code).or_default().push(Row {
            severity: cells[1].to_string(),
            confidence: cells[2].to_string(),
            citation: cells[3..cells.len() - 1].join(" | "),
        });
    }
    rows
}

fn is_code(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 3
        && b[0].is_ascii_uppercase()
        && b.contains(&b'_')
        && *b.last().unwrap() != b'_'
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

/// The production part of a source file: up to its test module (`#[cfg(test)] mod ...`).
fn production(src: &str) -> &str {
    let mut from = 0;
    while let Some(i) = src[from..].find("#[cfg(test)]") {
        let at = from + i;
        let next = src[at + "#[cfg(test)]".len()..].trim_start();
        if next.starts_with("mod ") || next.starts_with("pub mod ") {
            return &src[..at];
        }
        from = at + 1;
    }
    src
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "sim" {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") && name != "sim.rs" {
            out.push(p);
        }
    }
}

/// String literals of `src` with the byte offset after each.
fn literals(src: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' => {
                // A char literal ('"', '\'') or a lifetime: skip a char literal whole.
                if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                    continue;
                }
                if b.get(i + 1) == Some(&b'\\')
                    && let Some(end) = src[i + 2..].find('\'')
                {
                    i += end + 3;
                    continue;
                }
                i += 1;
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                out.push((&src[start..j.min(b.len())], j + 1));
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// What the engines' sources say of one code.
#[derive(Default)]
struct Scanned {
    files: BTreeSet<String>,
    /// (severity, citation literal if any) of each `"CODE", Severity::X, ...` site.
    stated: Vec<(String, Option<String>)>,
}

fn scan_engines() -> BTreeMap<String, Scanned> {
    let root = workspace().join("crates");
    let mut out: BTreeMap<String, Scanned> = BTreeMap::new();
    for krate in ENGINE_CRATES {
        let mut files = Vec::new();
        rust_files(&root.join(krate).join("src"), &mut files);
        for f in files {
            let text = read(&f);
            let src = production(&text);
            let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
            for (lit, end) in literals(src) {
                if !is_code(lit) || NOT_CODES.contains(&lit) {
                    continue;
                }
                let s = out.entry(lit.to_string()).or_default();
                s.files.insert(rel.clone());
                // `"CODE", Severity::X, "citation"` (the Violation::new form).
                let after = src[end..].trim_start();
                if let Some(rest) = after
                    .strip_prefix(',')
                    .map(str::trim_start)
                    .and_then(|r| r.strip_prefix("Severity::"))
                {
                    let sev: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphabetic())
                        .collect();
                    let rest = rest[sev.len()..].trim_start();
                    let citation = rest
                        .strip_prefix(',')
                        .map(str::trim_start)
                        .and_then(|r| r.strip_prefix('"'))
                        .and_then(|r| r.find('"').map(|e| r[..e].to_string()));
                    s.stated.push((sev.to_ascii_lowercase(), citation));
                }
            }
        }
    }
    out
}

/// The audit's own codes that `auditor.rs` uses.
fn audit_codes() -> BTreeSet<String> {
    let dir = workspace().join("crates/audit/src");
    let finding = read(&dir.join("finding.rs"));
    let auditor = read(&dir.join("auditor.rs"));
    let module = finding
        .split("pub mod codes {")
        .nth(1)
        .and_then(|m| m.split("\n}").next())
        .expect("audit finding.rs has `pub mod codes`");
    let mut out = BTreeSet::new();
    for line in module.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("pub const ") else {
            continue;
        };
        let name = rest.split(':').next().unwrap_or("").trim();
        let value = rest.split('"').nth(1).expect("a code constant's value");
        if production(&auditor).contains(&format!("codes::{name}")) {
            out.insert(value.to_string());
        }
    }
    assert!(!out.is_empty(), "no audit codes found in auditor.rs");
    out
}

/// Security finding codes ledger-store records (`code: "equivocation".into()`), as the audit
/// carries them (`SECURITY_` + capitals, ledger-convert).
fn security_codes() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&workspace().join("crates/ledger-store/src"), &mut files);
    let mut out = BTreeSet::new();
    for f in files {
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = read(&f);
        for part in production(&text).split("code: \"").skip(1) {
            let code = part.split('"').next().unwrap_or("");
            if !code.is_empty() && code.bytes().all(|c| c.is_ascii_lowercase() || c == b'_') {
                out.insert(format!("SECURITY_{}", code.to_ascii_uppercase()));
            }
        }
    }
    assert!(
        !out.is_empty(),
        "no security finding code found in ledger-store"
    );
    out
}

fn lower<T: std::fmt::Debug>(v: T) -> String {
    format!("{v:?}").to_ascii_lowercase()
}

fn sev_listed(row: &Row, sev: &str) -> bool {
    row.severity.split('/').any(|s| s.trim() == sev)
}

#[test]
fn findings_catalog_matches_the_code() {
    let doc = documented();
    let scanned = scan_engines();

    // Everything that can be emitted, with where it comes from.
    let mut emitted: BTreeMap<String, String> = BTreeMap::new();
    for (code, s) in &scanned {
        emitted.insert(
            code.clone(),
            s.files.iter().next().cloned().unwrap_or_default(),
        );
    }
    for c in jackpot::CHECKS.iter() {
        emitted.insert(c.code.to_string(), "jackpot::CHECKS".into());
    }
    for (code, _) in rules_poker::codes::ALL {
        emitted.insert(code.to_string(), "rules_poker::codes::ALL".into());
    }
    for f in rules_baccarat::chemin_de_fer::faults::Fault::ALL {
        emitted.insert(
            f.code().to_string(),
            "chemin_de_fer::faults::Fault::ALL".into(),
        );
    }
    for c in audit_codes() {
        emitted.insert(c, "crates/audit/src/auditor.rs".into());
    }
    for c in security_codes() {
        emitted.insert(c, "crates/ledger-store (SecurityFinding)".into());
    }

    let missing: Vec<String> = emitted
        .iter()
        .filter(|(c, _)| !doc.contains_key(*c))
        .map(|(c, from)| format!("{c} (from {from})"))
        .collect();
    let extra: Vec<&String> = doc.keys().filter(|c| !emitted.contains_key(*c)).collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "codes the code can emit that docs/findings.md does not list:\n  {}",
            missing.join("\n  ")
        ));
    }
    if !extra.is_empty() {
        problems.push(format!(
            "codes docs/findings.md lists that nothing emits:\n  {}",
            extra
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n  ")
        ));
    }

    // Severity, confidence and citation where the code states them.
    let mut wrong = Vec::new();
    for c in jackpot::CHECKS.iter() {
        let (sev, conf) = (lower(c.severity), lower(c.confidence));
        let ok = doc.get(c.code).is_some_and(|rows| {
            rows.iter()
                .any(|r| r.severity == sev && r.confidence == conf && r.citation == c.citation)
        });
        if !ok && doc.contains_key(c.code) {
            wrong.push(format!(
                "{}: jackpot::CHECKS says {sev}, {conf}, \"{}\"",
                c.code, c.citation
            ));
        }
    }
    for (code, sev) in rules_poker::codes::ALL {
        let sev = lower(sev);
        if let Some(rows) = doc.get(code)
            && !rows.iter().any(|r| sev_listed(r, &sev))
        {
            wrong.push(format!("{code}: rules_poker::codes::ALL says {sev}"));
        }
    }
    for f in rules_baccarat::chemin_de_fer::faults::Fault::ALL {
        let sev = lower(f.severity());
        if let Some(rows) = doc.get(f.code())
            && !rows
                .iter()
                .any(|r| sev_listed(r, &sev) && r.citation.contains(f.citation()))
        {
            wrong.push(format!(
                "{}: Fault catalog says {sev}, \"{}\"",
                f.code(),
                f.citation()
            ));
        }
    }
    for (code, s) in &scanned {
        let Some(rows) = doc.get(code) else { continue };
        for (sev, citation) in &s.stated {
            if !rows.iter().any(|r| sev_listed(r, sev)) {
                wrong.push(format!(
                    "{code}: the source ({:?}) emits it as {sev}",
                    s.files
                ));
            }
            if let Some(cit) = citation
                && !rows.iter().any(|r| r.citation.contains(cit.as_str()))
            {
                wrong.push(format!(
                    "{code}: the source ({:?}) cites \"{cit}\", which its row does not",
                    s.files
                ));
            }
        }
    }
    for (code, rows) in &doc {
        for r in rows {
            let known_sev = r
                .severity
                .split('/')
                .all(|s| matches!(s.trim(), "info" | "low" | "medium" | "high" | "critical"));
            let known_conf = matches!(
                r.confidence.as_str(),
                "certain" | "review" | "certain / review"
            );
            if !known_sev || !known_conf {
                wrong.push(format!(
                    "{code}: severity `{}` / confidence `{}` not in the vocabulary",
                    r.severity, r.confidence
                ));
            }
        }
    }
    if !wrong.is_empty() {
        problems.push(format!(
            "docs/findings.md disagrees with the code:\n  {}",
            wrong.join("\n  ")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The member names of `oneof <name> { ... }` in a proto file: the message types.
fn oneof_types(proto: &str, name: &str) -> Vec<String> {
    let body = proto
        .split(&format!("oneof {name} {{"))
        .nth(1)
        .and_then(|b| b.split('}').next())
        .unwrap_or_else(|| panic!("oneof {name} not found"));
    body.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && l.contains('='))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn events_catalog_documents_every_payload() {
    let root = workspace();
    let events = read(&root.join("proto/casino_ledger/v1/events.proto"));
    let ledger = read(&root.join("proto/casino_ledger/v1/ledger.proto"));
    let doc = read(&root.join("docs/events.md"));
    let headings: Vec<&str> = doc.lines().filter(|l| l.starts_with('#')).collect();
    let mut types = oneof_types(&events, "payload");
    assert!(
        types.len() >= 30,
        "EventBody's oneof payload parsed to {types:?}"
    );
    types.extend(oneof_types(&ledger, "record"));
    let missing: Vec<&String> = types
        .iter()
        .filter(|t| {
            let tick = format!("`{t}`");
            !headings.iter().any(|h| h.contains(&tick))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/events.md has no heading naming these payloads (as `Name`): {missing:?}"
    );
}
