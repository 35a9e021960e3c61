//! The audit, driving the real engines, finds in each docs/rounds example exactly what the
//! engine finds when the example is adjudicated directly: assembling a round from ledger entries
//! loses and invents nothing.

use std::path::PathBuf;

use audit::{AuditInput, AuditSettings, Auditor, EntryMeta, RulesEngines};
use rules_core::{Options, RoundInput};

/// Feed one example through the audit as ledger entries; return the finding codes.
fn audit_codes(input: &RoundInput) -> (Vec<String>, usize) {
    let mut a = Auditor::new(RulesEngines, AuditSettings::default());
    let t = "T1".to_string();
    let r = input.round.round_id.to_string();
    let start = input.round.opened_at_ms.unwrap_or(1_767_225_600_000);
    let mut inputs = vec![
        (
            start,
            AuditInput::TableConfigured {
                table_id: t.clone(),
                config: input.table.clone(),
            },
        ),
        (
            start,
            AuditInput::RoundOpened {
                table_id: t.clone(),
                round_id: r.clone(),
            },
        ),
    ];
    for e in &input.round.events {
        inputs.push((
            e.at_ms.unwrap_or(start),
            AuditInput::RoundEvent {
                table_id: t.clone(),
                round_id: r.clone(),
                event: e.clone(),
            },
        ));
    }
    inputs.push((
        start + 60_000,
        AuditInput::RoundSettled {
            table_id: t.clone(),
            round_id: r.clone(),
            settlement: input.round.settlement.clone().unwrap_or_default(),
        },
    ));
    let (mut codes, mut closed) = (Vec::new(), 0);
    for (i, (ms, input)) in inputs.into_iter().enumerate() {
        let meta = EntryMeta {
            index: i as u64 + 1,
            received_at_ms: ms,
            signer: "table".into(),
        };
        let out = a.apply(&meta, input);
        codes.extend(out.findings.into_iter().map(|f| f.code));
        closed += out.rounds.len();
    }
    (codes, closed)
}

#[test]
fn audit_path_equals_direct_adjudication_for_every_example() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/rounds");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let (mut checked, mut readable) = (0, 0);
    for path in paths {
        let mut input: RoundInput =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if !rules::has_engine(input.table.game) {
            continue;
        }
        // The audit replays from a freshly opened table: compare from that state on both paths.
        input.state = None;
        let table = rules::ConfiguredTable::new(input.table.clone()).unwrap();
        let mut expected: Vec<String> = table
            .violations()
            .iter()
            .map(|v| v.code.to_string())
            .collect();
        let mut closed_expected = 0;
        match rules::adjudicate_input(&input, &Options::default()) {
            Ok(direct) => {
                let adj = direct.adjudication;
                expected.extend(adj.violations.iter().map(|v| v.code.to_string()));
                expected.extend(adj.discrepancies.iter().map(|d| d.code.to_string()));
                readable += 1;
                closed_expected = 1;
            }
            // Examples that build on bets carried from earlier rounds cannot be read from a
            // fresh table, on either path.
            Err(_) => expected.push(audit::codes::ROUND_UNREADABLE.to_string()),
        }
        let (got, closed) = audit_codes(&input);
        assert_eq!(got, expected, "{}", path.display());
        assert_eq!(closed, closed_expected, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} examples replayed");
    assert!(
        readable >= 3,
        "only {readable} examples readable from a fresh table"
    );
}

/// The audit sees an engine for every table game and none for the others (a slot machine's
/// game is audited by the jackpot accounts, not as a table).
#[test]
fn the_audit_sees_an_engine_for_every_table_game_only() {
    use audit::Adjudicator;
    let others: Vec<_> = rules_core::GameId::ALL
        .into_iter()
        .filter(|g| !g.is_table_game())
        .collect();
    assert!(!others.is_empty());
    for game in rules_core::GameId::ALL {
        assert_eq!(
            RulesEngines.has_engine(game),
            game.is_table_game(),
            "{game}"
        );
    }
}
