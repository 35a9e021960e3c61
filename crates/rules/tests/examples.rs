//! Every example of the JSON round format in docs/rounds/ parses, adjudicates through the facade,
//! and adjudicates identically twice (determinism).

use std::path::PathBuf;

use rules::{adjudicate_input, explain, has_engine};
use rules_core::{Options, RoundInput};

fn examples() -> Vec<(String, RoundInput)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/rounds");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("docs/rounds exists") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let input: RoundInput =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            input,
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_example_adjudicates_deterministically_through_the_facade() {
    let mut seen = 0;
    for (name, input) in examples() {
        assert_eq!(
            name,
            format!("{}.json", input.table.game),
            "an example is named after its game"
        );
        if !has_engine(input.table.game) {
            continue;
        }
        let a = adjudicate_input(&input, &Options { explain: true })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let b = adjudicate_input(&input, &Options { explain: true }).unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap(),
            "{name}"
        );
        assert!(
            !a.adjudication.bets.is_empty(),
            "{name}: no bets adjudicated"
        );
        assert!(
            !a.adjudication.notes.is_empty(),
            "{name}: --explain gives no notes"
        );
        let text = explain::render(&a.adjudication, &a.config_violations);
        assert!(text.contains("Bets:"), "{name}");
        seen += 1;
    }
    assert!(seen >= 6, "only {seen} examples adjudicated");
}

#[test]
#[ignore = "prints the explanations for a human to read"]
fn print_explanations() {
    for (name, input) in examples() {
        if has_engine(input.table.game) {
            let a = adjudicate_input(&input, &Options { explain: true }).unwrap();
            println!(
                "===== {name}\n{}",
                explain::render(&a.adjudication, &a.config_violations)
            );
        }
    }
}

/// Every simulator plays through the facade: honest rounds chained through the facade's state
/// give no finding; each listed mistake gives exactly its codes.
#[test]
fn simulators_play_through_the_facade() {
    use rules_core::{GameId, SimRng, honest_settlement};
    let mut played = 0;
    for game in GameId::ALL {
        if !rules::has_simulator(game) {
            continue;
        }
        let table = rules::ConfiguredTable::new(rules::example_table(game).unwrap()).unwrap();
        assert!(
            table.violations().is_empty(),
            "{game}: {:?}",
            table.violations()
        );
        let mut state = table.fresh_state();
        let mut rng = SimRng::new(2026);
        let mut ms = 1_767_225_600_000;
        for i in 0..200 {
            let round = table
                .simulate(&state, format!("{game}-{i}").into(), ms, &mut rng, None)
                .unwrap();
            let adj = table
                .adjudicate(&mut state, &round, &Options::default())
                .unwrap();
            assert!(
                adj.violations.is_empty() && adj.discrepancies.is_empty(),
                "{game} round {i}: {adj:#?}"
            );
            assert_eq!(
                round.settlement.as_ref(),
                Some(&honest_settlement(&adj)),
                "{game} round {i}"
            );
            ms = round
                .events
                .iter()
                .filter_map(|e| e.at_ms)
                .max()
                .unwrap_or(ms)
                + 30_000;
        }
        for m in rules::mistakes(game) {
            let mut s = state.clone();
            let round = match table.simulate(
                &s,
                format!("{game}-{}", m.id).into(),
                ms,
                &mut rng,
                Some(m.id),
            ) {
                Ok(r) => r,
                Err(rules_core::SimError::MistakeNotApplicable { .. }) => continue,
                Err(e) => panic!("{game} {}: {e}", m.id),
            };
            let adj = table
                .adjudicate(&mut s, &round, &Options::default())
                .unwrap();
            let mut codes: Vec<String> =
                adj.violations.iter().map(|v| v.code.to_string()).collect();
            codes.extend(adj.discrepancies.iter().map(|d| d.code.to_string()));
            codes.sort();
            codes.dedup();
            let mut want: Vec<String> = m.codes.iter().map(|c| c.to_string()).collect();
            want.sort();
            assert_eq!(codes, want, "{game} mistake {}", m.id);
        }
        played += 1;
    }
    assert_eq!(played, 16, "every table game has a simulator");
}

/// "A game with no engine (there must be none left)": every table game of the regulations has
/// one.
#[test]
fn every_table_game_has_an_engine() {
    for game in rules_core::GameId::ALL {
        assert_eq!(rules::has_engine(game), game.is_table_game(), "{game}");
    }
}

/// Every number in every example set in turn to the edges of the integer types (and every string
/// to odd text): each document either fails to parse, is refused with an error, or adjudicates;
/// nothing panics or overflows (tests run with overflow checks on). Round files come from
/// anyone (`ledgerctl adjudicate`), and the engines see the same values from the ledger.
#[test]
fn every_field_of_every_example_at_its_edges_adjudicates_or_is_refused() {
    fn leaves(v: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    path.push(k.clone());
                    leaves(x, path, out);
                    path.pop();
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    path.push(i.to_string());
                    leaves(x, path, out);
                    path.pop();
                }
            }
            _ => out.push(path.clone()),
        }
    }
    fn at<'a>(v: &'a mut serde_json::Value, path: &[String]) -> &'a mut serde_json::Value {
        path.iter().fold(v, |v, k| match v {
            serde_json::Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
            v => &mut v[k.as_str()],
        })
    }
    let numbers = [
        serde_json::json!(i64::MIN),
        serde_json::json!(i64::MAX),
        serde_json::json!(u64::MAX),
        serde_json::json!(-1),
        serde_json::json!(0),
        serde_json::json!(u32::MAX as u64 + 1),
    ];
    let texts = [
        serde_json::json!(""),
        serde_json::json!("é"),
        serde_json::json!("x".repeat(300)),
    ];
    let (mut adjudicated, mut refused) = (0, 0);
    for (name, input) in examples() {
        if !has_engine(input.table.game) {
            continue;
        }
        let doc = serde_json::to_value(&input).unwrap();
        let mut paths = Vec::new();
        leaves(&doc, &mut Vec::new(), &mut paths);
        for path in paths {
            let edges: &[serde_json::Value] = match at(&mut doc.clone(), &path) {
                serde_json::Value::Number(_) => &numbers,
                serde_json::Value::String(_) => &texts,
                _ => &[],
            };
            for edge in edges {
                let mut d = doc.clone();
                *at(&mut d, &path) = edge.clone();
                let Ok(input) = serde_json::from_value::<RoundInput>(d) else {
                    refused += 1;
                    continue;
                };
                let outcome = std::panic::catch_unwind(|| {
                    adjudicate_input(&input, &Options { explain: true })
                })
                .unwrap_or_else(|_| panic!("{name}: {} = {edge}: panicked", path.join(".")));
                match outcome {
                    Ok(_) => adjudicated += 1,
                    Err(_) => refused += 1,
                }
            }
        }
    }
    assert!(
        adjudicated > 1000 && refused > 1000,
        "{adjudicated} adjudicated, {refused} refused"
    );
}

/// A configuration's own violations come through the facade: French roulette's straight-up
/// maximum may be at most 30 times its minimum (P217/2007 T.I C.I S.II r.24(a)); the table is
/// the one configured, and a compliant one has none.
#[test]
fn a_configuration_violation_comes_through_the_facade() {
    use rules_core::{ChanceLimit, GameId};
    let mut table = rules::example_table(GameId::RouletteFrench).unwrap();
    let clean = rules::ConfiguredTable::new(table.clone()).unwrap();
    assert!(clean.violations().is_empty(), "{:?}", clean.violations());
    assert_eq!(clean.game(), GameId::RouletteFrench);
    assert_eq!(clean.config(), &table);
    table.limits.retain(|l| l.chance != "straight");
    table.limits.push(ChanceLimit {
        chance: "straight".into(),
        min_cents: Some(500),
        max_cents: Some(15_500),
    });
    let t = rules::ConfiguredTable::new(table.clone()).unwrap();
    let v: Vec<_> = t
        .violations()
        .iter()
        .map(|v| (v.code.as_ref(), v.citation.as_ref()))
        .collect();
    assert_eq!(v, [("RL_LIMIT_RATIO", "P217/2007 T.I C.I S.II r.24(a)")]);
}
