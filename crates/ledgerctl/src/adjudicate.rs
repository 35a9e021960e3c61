//! `ledgerctl adjudicate`: run the rule engines on rounds written as JSON (one document, or JSON
//! Lines), offline. What a compliance officer uses on a disputed hand.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context;
use rules_core::{Options, RoundInput};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Each input document is {\"table\": ..., \"state\": ... (optional), \"round\": ...}: the table
configuration in force, the table state before the round (as printed in `state_after`; absent
means a table that has just opened) and the round's events with, optionally, the settlement the
casino reported. docs/rounds/README.md describes the format; docs/rounds/<game>.json has one
complete example per game.

Examples:
  ledgerctl adjudicate docs/rounds/blackjack.json --explain
  cat rounds.jsonl | ledgerctl adjudicate --json")]
pub struct Args {
    /// A JSON file (one document) or JSON Lines file (one document per line); `-` or absent:
    /// standard input.
    pub file: Option<PathBuf>,
    /// Print a rule-by-rule explanation instead of JSON.
    #[arg(long)]
    pub explain: bool,
    /// Carry each table's state to the next document that has no `state` of its own.
    #[arg(long)]
    pub chain: bool,
}

fn documents(text: &str) -> anyhow::Result<Vec<RoundInput>> {
    let trimmed = text.trim_start();
    // One document (possibly pretty-printed), or one per line.
    if let Ok(one) = serde_json::from_str::<RoundInput>(trimmed) {
        return Ok(vec![one]);
    }
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let doc = serde_json::from_str(line).with_context(|| {
            format!(
                "line {}: not a round document (see docs/rounds/README.md)",
                n + 1
            )
        })?;
        out.push(doc);
    }
    if out.is_empty() {
        anyhow::bail!("no round document in the input");
    }
    Ok(out)
}

/// Returns the exit code: 0 if every round adjudicates with no finding, 1 if some round has a
/// finding, 2 on a record the engines cannot read.
pub fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let mut text = String::new();
    match &a.file {
        Some(p) if p.as_os_str() != "-" => {
            text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?
        }
        _ => {
            std::io::stdin().lock().read_to_string(&mut text)?;
        }
    }
    let docs = documents(&text)?;
    let options = Options { explain: a.explain };
    let mut carried: Option<(rules_core::TableConfig, serde_json::Value)> = None;
    let mut findings = false;
    for (i, mut doc) in docs.into_iter().enumerate() {
        if a.chain
            && doc.state.is_none()
            && let Some((t, s)) = &carried
            && t.table_id == doc.table.table_id
            && t.game == doc.table.game
        {
            doc.state = Some(s.clone());
        }
        let result = rules::adjudicate_input(&doc, &options)
            .map_err(|e| anyhow::anyhow!("document {}: {e}", i + 1));
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                if json {
                    println!("{}", serde_json::json!({ "error": e.to_string() }));
                } else {
                    eprintln!("{e}");
                }
                return Ok(2);
            }
        };
        findings |= !result.config_violations.is_empty()
            || !result.adjudication.violations.is_empty()
            || !result.adjudication.discrepancies.is_empty();
        if a.explain && !json {
            println!(
                "{}",
                rules::explain::render(&result.adjudication, &result.config_violations)
            );
        } else {
            println!("{}", serde_json::to_string(&result)?);
        }
        carried = Some((doc.table, result.state_after));
    }
    Ok(if findings { 1 } else { 0 })
}
