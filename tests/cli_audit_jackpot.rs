//! The real `ledgerctl` against the real ledgerd: `round --explain` on a disputed hand, `report` in
//! its three formats, and the jackpot commands, `transfer` above all (ineligible: refused without
//! --force; with --force: booked as carried out, P217/2007 T.III r.5, and flagged; eligible: the
//! whole value moves).

use std::collections::BTreeMap;
use std::path::PathBuf;

use e2e::slots::*;
use e2e::*;
use ledger_agent::DeviceSigner;
use ledger_core::proto::{self as v1, query_client::QueryClient};

/// A casino-sim session of every table game (no slot floor), with its known mistakes, streamed
/// into a fresh ledger and audited.
struct TableSession {
    _dir: tempfile::TempDir,
    ledgerd: Ledgerd,
    session: casino_sim::Session,
    receipts: Vec<v1::Receipt>,
}

async fn table_session() -> TableSession {
    table_session_with("").await
}

/// [`table_session`] with `extra` sections in ledgerd's configuration.
async fn table_session_with(extra: &str) -> TableSession {
    let dir = tempdir();
    let cfg = write_config_with_regulator_and(dir.path(), extra);
    let ledgerd = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = ledgerd.url();
    let mut plan = casino_sim::standard_plan(5, 0, 11, true, "operator-1", REGULATOR_ID);
    plan.floor = Default::default();
    plan.transfer = None;
    plan.misreported_pool = None;
    plan.meter_backwards = None;
    plan.start_ms = now_ms() - casino_sim::duration_ms(&plan).unwrap() - 60_000;
    let session = casino_sim::generate(&plan).unwrap();
    let specs: Vec<casino_play::sim::DeviceSpec> = session
        .devices
        .iter()
        .map(|d| casino_play::sim::DeviceSpec {
            device_id: d.device_id.clone(),
            kind: d.kind,
            casino_id: d.casino_id.clone(),
            table_ids: d.table_ids.clone(),
            machine_id: d.machine_id.clone(),
            model_id: d.model_id.clone(),
            bet_values_cents: d.bet_values_cents.clone(),
            description: d.description.clone(),
        })
        .collect();
    let mut signers: BTreeMap<String, DeviceSigner> = register(&url, 1, &specs)
        .await
        .into_iter()
        .map(|s| (s.device_id.clone(), s))
        .collect();
    signers.insert(
        "operator-1".into(),
        DeviceSigner::new("operator-1", operator_key(), specs.len() as u64 + 1),
    );
    let envs: Vec<v1::Envelope> = session
        .events
        .iter()
        .map(|e| {
            signers
                .get_mut(&e.device_id)
                .unwrap_or_else(|| panic!("no signer {}", e.device_id))
                .sign(e.occurred_at_ms, e.payload.clone())
        })
        .collect();
    let receipts = submit(&url, &envs).await;
    for r in &receipts {
        assert_eq!(st(r), v1::ReceiptStatus::Accepted, "{r:?}");
    }
    wait_caught_up(&url).await;
    TableSession {
        _dir: dir,
        ledgerd,
        session,
        receipts,
    }
}

fn ctl(url: &str, args: &[&str]) -> (i32, String, String) {
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--server", url]);
    ledgerctl(&a)
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Evidence bundles: every round of the session with a planted mistake is bundled by
/// `ledgerctl evidence` and checked offline by `verify --evidence` with the ledger's key alone
/// (the rules run again and give the same adjudication and findings); each kind of tampering is
/// refused with its reason.
#[tokio::test]
async fn evidence_bundles_of_disputed_rounds_verify_offline_and_tampering_is_refused() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let t = table_session().await;
    let url = t.ledgerd.url();
    let key = t.ledgerd.ledger_key.clone();
    let (code, out, err) = ledgerctl_as("e2e-admin", &["checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    let dir = tempdir();
    let mut rounds: Vec<(String, String, String)> = t
        .session
        .expected
        .iter()
        .filter_map(|e| Some((e.subject.clone(), e.round_id.clone()?, e.code.clone())))
        .collect();
    rounds.dedup();
    assert!(rounds.len() >= 5, "{rounds:?}");
    let mut bundles = Vec::new();
    for (table, round, code_planted) in &rounds {
        let f = dir.path().join(format!("{table}-{round}.json"));
        let (code, out, err) = ctl(
            &url,
            &[
                "evidence",
                "--round",
                round,
                "--table",
                table,
                "--out",
                f.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 0, "{out}{err}");
        let (code, out, err) = ledgerctl(&[
            "verify",
            "--evidence",
            f.to_str().unwrap(),
            "--ledger-key",
            &key,
        ]);
        assert_eq!(code, 0, "{table} {round}: {out}{err}");
        assert!(
            out.contains("the rules give the same adjudication"),
            "{out}"
        );
        let b: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let codes: Vec<&str> = b["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        assert!(
            codes.contains(&code_planted.as_str()),
            "{codes:?} lacks {code_planted}"
        );
        bundles.push((f, b));
    }

    // Tampering, each refused with its reason.
    let (_, original) = bundles
        .iter()
        .find(|(_, b)| {
            b["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f.get("dueCents").is_some())
        })
        .expect("a round with a payout discrepancy");
    let refused = |edit: &dyn Fn(&mut serde_json::Value), why: &str| {
        let mut v = original.clone();
        edit(&mut v);
        let f = dir.path().join("tampered.json");
        std::fs::write(&f, v.to_string()).unwrap();
        let (code, out, err) = ledgerctl(&[
            "verify",
            "--evidence",
            f.to_str().unwrap(),
            "--ledger-key",
            &key,
        ]);
        assert_eq!(code, 1, "{why}: {out}{err}");
        assert!(err.contains(why), "{why:?} not in {err}");
    };
    let events: Vec<usize> = original["entries"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, e)| e["role"] == "event")
        .map(|(k, _)| k)
        .collect();
    // An event's bytes (a bet amount, a card): no longer the entry the tree holds.
    let k = events[0];
    let reencoded = |k: usize, edit: &dyn Fn(&mut v1::EventBody)| {
        let bytes = b64
            .decode(original["entries"][k]["entry"].as_str().unwrap())
            .unwrap();
        let mut e = <v1::ChainEntry as prost::Message>::decode(bytes.as_slice()).unwrap();
        let mut body = <v1::EventBody as prost::Message>::decode(e.body.as_slice()).unwrap();
        edit(&mut body);
        e.body = prost::Message::encode_to_vec(&body);
        serde_json::Value::String(b64.encode(prost::Message::encode_to_vec(&e)))
    };
    let changed = reencoded(k, &|b| b.occurred_at_ms += 1);
    refused(
        &|v| v["entries"][k]["entry"] = changed.clone(),
        "is not in the checkpoint's tree",
    );
    refused(
        &|v| {
            let h = v["entries"][k]["proof"][0].as_str().unwrap().to_string();
            let mut raw = b64.decode(h).unwrap();
            raw[0] ^= 1;
            v["entries"][k]["proof"][0] = b64.encode(raw).into();
        },
        "is not in the checkpoint's tree",
    );
    refused(
        &|v| {
            let note = v["checkpoint"].as_str().unwrap();
            let cut = note.rfind(' ').unwrap() + 1;
            let mut sig = b64.decode(note[cut..].trim()).unwrap();
            sig[10] ^= 1;
            v["checkpoint"] = format!("{}{}\n", &note[..cut], b64.encode(sig)).into();
        },
        "not signed by the ledger key",
    );
    refused(
        &|v| {
            v["entries"].as_array_mut().unwrap().remove(k);
        },
        "the bundle's round entries are",
    );
    refused(
        &|v| {
            let f = v["findings"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|f| f.get("dueCents").is_some())
                .unwrap();
            let due: i64 = f["dueCents"]
                .as_str()
                .map(|s| s.parse().unwrap())
                .or(f["dueCents"].as_i64())
                .unwrap();
            f["dueCents"] = (due + 100).to_string().into();
        },
        "does not follow from the events",
    );
    refused(
        &|v| {
            v["findings"]
                .as_array_mut()
                .unwrap()
                .retain(|f| f.get("dueCents").is_none());
        },
        "the bundle has no finding for it",
    );
    refused(
        &|v| {
            let bets = v["adjudication"]["bets"].as_array_mut().unwrap();
            let due = bets[0]["due_net_cents"].as_i64().unwrap();
            bets[0]["due_net_cents"] = (due + 500).into();
        },
        "is not what the rules give",
    );
    // A witness the checkpoint has no cosignature of.
    let w = ledger_core::note::cosigner_vkey(
        "inspectorate.example/w1",
        &ed25519_dalek::SigningKey::from_bytes(&[3; 32]).verifying_key(),
    );
    let (code, _, err) = ledgerctl(&[
        "verify",
        "--evidence",
        bundles[0].0.to_str().unwrap(),
        "--ledger-key",
        &key,
        "--witness-key",
        &w,
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("not cosigned by witness inspectorate.example/w1"),
        "{err}"
    );
}

#[tokio::test]
async fn round_explain_and_report_in_three_formats() {
    let t = table_session().await;
    let url = t.ledgerd.url();

    // --- round: the disputed hand (the injected overpayment at the French roulette table)
    let disputed = t
        .session
        .expected
        .iter()
        .find(|e| e.subject.contains("roulette-french") && e.round_id.is_some())
        .expect("the roulette mistake");
    let round_id = disputed.round_id.clone().unwrap();
    let (code, out, err) = ctl(&url, &["round", &round_id, "--explain"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with(&format!(
            "Round {round_id} at table {} (roulette_french), casino ",
            disputed.subject
        )),
        "{out}"
    );
    for want in [
        "  opened ",
        "  closed ",
        " settled  (by dev-",
        "on its clock)",
        "  configuration   entry ",
        "players' net",
        "casino win",
        "Bets (players' nets):",
        "DIFFERS by +",
        &disputed.code,
        "rule: P217/2007",
        "Rule by rule:",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    // JSON: the same round, the findings with their amounts, the explanation.
    let (code, out, err) = ctl(
        &url,
        &["round", &round_id, "--explain", "--entries", "--json"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["round_id"], round_id.as_str());
    assert!(v["summary"].get("state_before").is_none());
    assert!(!v["explanation"].as_str().unwrap().is_empty());
    let f = v["findings"].as_array().unwrap();
    let wrong = f
        .iter()
        .find(|f| f["code"] == disputed.code.as_str())
        .expect("the payout finding");
    assert_ne!(wrong["due_cents"], wrong["reported_cents"]);
    let bets = v["adjudication"]["bets"].as_array().unwrap();
    assert!(
        bets.iter()
            .any(|b| b["bet_id"] == wrong["bet_id"] && b["due_net_cents"] == wrong["due_cents"])
    );
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(
        entries.len(),
        v["summary"]["event_indexes"].as_array().unwrap().len() + 3
    );
    // An honest round: no finding.
    let honest = format!("{}-00000", disputed.subject);
    let (code, out, _) = ctl(&url, &["round", &honest, "--table", &disputed.subject]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Findings (0):") && !out.contains("DIFFERS"),
        "{out}"
    );
    assert!(!out.contains("Rule by rule:"), "only with --explain");
    // A round that does not exist: the argument is named.
    let (code, _, err) = ctl(&url, &["round", "no-such-round"]);
    assert_eq!(code, 1);
    assert!(err.contains("ROUND_ID `no-such-round`"), "{err}");

    // --- report over the session's period: CSV, JSON and the table agree
    let first = t.receipts.first().unwrap().received_at_ms;
    let last = t.receipts.last().unwrap().received_at_ms;
    let (from, to) = (rfc3339(first - 1_000), rfc3339(last + 1_000));
    let (code, csv, err) = ctl(
        &url,
        &["report", "--from", &from, "--to", &to, "--format", "csv"],
    );
    assert_eq!(code, 0, "{csv}{err}");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "period,from,to,casino_id,table_id,game,rounds,void_rounds,handle_cents,\
         due_player_net_cents,reported_player_net_cents,due_win_cents,reported_win_cents,hold_bp,\
         due_hold_bp,discrepancies,discrepancy_abs_cents,first_day,last_day"
    );
    let rows: Vec<Vec<&str>> = lines[1..].iter().map(|l| l.split(',').collect()).collect();
    let tables = t.session.devices.len();
    assert_eq!(
        rows.len(),
        tables + 2 + 1,
        "tables, two casino totals, the total"
    );
    for r in &rows {
        assert_eq!(r.len(), 19, "{r:?}");
        assert_eq!(r[0], "period");
        assert_eq!(
            &r[17..],
            ["", ""],
            "a period of instants has no gaming days"
        );
        for n in &r[6..17] {
            n.parse::<i64>()
                .unwrap_or_else(|_| panic!("{n:?} in {r:?}"));
        }
    }
    let total = rows.last().unwrap();
    assert_eq!(&total[3..6], ["*", "*", "*"]);
    assert_eq!(total[6], t.session.rounds.to_string());
    let by_table: i64 = rows
        .iter()
        .filter(|r| r[4] != "*")
        .map(|r| r[8].parse::<i64>().unwrap())
        .sum();
    assert_eq!(
        total[8],
        by_table.to_string(),
        "the total handle is the tables' sum"
    );
    assert!(total[15].parse::<u64>().unwrap() >= 1, "the overpayment");

    let (code, out, err) = ctl(&url, &["report", "--from", &from, "--to", &to, "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let jrows = v["periods"][0]["rows"].as_array().unwrap();
    assert_eq!(v["periods"][0]["name"], "period");
    assert_eq!(jrows.len(), rows.len());
    let jtotal = jrows.iter().find(|r| r["casino_id"] == "*").unwrap();
    assert_eq!(jtotal["handle_cents"].to_string(), total[8]);
    assert_eq!(jtotal["reported_win_cents"].to_string(), total[12]);

    let (code, out, err) = ctl(&url, &["report", "--from", &from, "--to", &to]);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("Period "), "{out}");
    for h in [
        "casino",
        "handle",
        "due win",
        "reported win",
        "hold %",
        "due hold %",
    ] {
        assert!(lines[1].contains(h), "{}", lines[1]);
    }
    let t_total = lines.last().unwrap();
    assert!(t_total.starts_with("TOTAL"), "{out}");
    // Money for people in English (ledger-fmt): `€1,234.56`.
    let cents = |s: &str| ledger_fmt::money(s.parse().unwrap(), ledger_fmt::Locale::En);
    assert!(
        t_total.contains(&format!(" {} ", cents(total[8]))),
        "{t_total}"
    );
    let hold: i64 = total[13].parse().unwrap();
    let hold = format!(
        "{}{}.{:02}",
        if hold < 0 { "-" } else { "" },
        hold.abs() / 100,
        hold.abs() % 100
    );
    assert!(t_total.contains(&format!(" {hold} ")), "{t_total} {hold}");
    // Columns are aligned: every row is as long as the header up to the last column.
    let width = |l: &str| l.chars().count();
    assert!(
        lines[2..].iter().all(|l| width(l) == width(lines[1])),
        "{out}"
    );

    // Day mode: the gaming day (Europe/Lisbon from 06:00 by default), the month to date and the
    // year to date.
    let day = audit::DayRule::default()
        .day_of(last)
        .format("%Y-%m-%d")
        .to_string();
    let (code, out, err) = ctl(&url, &["report", "--day", &day]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with("Gaming days: Europe/Lisbon from 06:00\n\nGaming day ")
            && out.contains(&format!("Gaming day {day}  [")),
        "{out}"
    );
    assert!(
        out.contains("\nMonth to date, ") && out.contains("\nYear to date, "),
        "{out}"
    );
    let (code, out, _) = ctl(&url, &["report", "--day", &day, "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = v["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["day", "month_to_date", "year_to_date"]);
    let ytd = v["periods"][2]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["casino_id"] == "*")
        .unwrap();
    assert_eq!(ytd["rounds"], t.session.rounds as u64);
    // Usage errors name the argument.
    let (code, _, err) = ctl(&url, &["report", "--day", "21/11/2026"]);
    assert_eq!(code, 1);
    assert!(err.contains("--day"), "{err}");
    let (code, _, _) = ctl(&url, &["report"]);
    assert_eq!(code, 2, "a period or a day is required");
    t.ledgerd.stop();
}

/// Gaming days per casino (ledgerd `[reports]`): a casino on Kiritimati's clock (UTC+14) and one
/// on Pago Pago's (UTC-11) are always on different dates, so the rounds settled now count on
/// different gaming days; GetReport and `ledgerctl report --day` show each casino on its own day
/// only, and `--days` gives the series of days.
#[tokio::test]
async fn reports_count_rounds_on_each_casinos_gaming_day() {
    let mut casinos: Vec<String> = {
        let plan = casino_sim::standard_plan(5, 0, 11, true, "operator-1", REGULATOR_ID);
        let mut c: Vec<String> = plan.tables.iter().map(|t| t.casino_id.clone()).collect();
        c.sort();
        c.dedup();
        c
    };
    assert!(casinos.len() >= 2, "{casinos:?}");
    let (east, west) = (casinos.remove(0), casinos.remove(0));
    let t = table_session_with(&format!(
        "[reports]\ntime_zone = \"Pacific/Kiritimati\"\nday_starts = \"00:00\"\n\
         [reports.casinos.{west}]\ntime_zone = \"Pacific/Pago_Pago\"\nday_starts = \"00:00\"\n"
    ))
    .await;
    let url = t.ledgerd.url();
    let rule = |tz: &str| audit::DayRule::parse(tz, "00:00").unwrap();
    let (k, p) = (rule("Pacific/Kiritimati"), rule("Pacific/Pago_Pago"));
    let first = t.receipts.first().unwrap().received_at_ms;
    let last = t.receipts.last().unwrap().received_at_ms + 5_000;
    if k.day_of(first) != k.day_of(last) || p.day_of(first) != p.day_of(last) {
        eprintln!("the session crossed midnight in one of the zones: nothing to compare");
        return;
    }
    let (east_day, west_day) = (k.day_of(last), p.day_of(last));
    assert!(east_day > west_day);
    let total = |v: &serde_json::Value, period: usize, casino: &str| {
        v["periods"][period]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["casino_id"] == casino && r["table_id"] == "*")
            .map_or(0, |r| r["rounds"].as_u64().unwrap())
    };
    let report = |day: chrono::NaiveDate, days: &str| {
        let d = day.format("%Y-%m-%d").to_string();
        let (code, out, err) = ctl(&url, &["report", "--day", &d, "--days", days, "--json"]);
        assert_eq!(code, 0, "{out}{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let v = report(east_day, "2");
    assert_eq!(
        v["gaming_day"],
        format!("Pacific/Kiritimati from 00:00; {west}: Pacific/Pago_Pago from 00:00")
    );
    let names: Vec<&str> = v["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "day",
            "month_to_date",
            "year_to_date",
            "gaming_day",
            "gaming_day"
        ]
    );
    assert_eq!(v["periods"][4]["first_day"], east_day.to_string());
    assert_eq!(
        v["periods"][3]["first_day"],
        east_day.pred_opt().unwrap().to_string()
    );
    let east_rounds = total(&v, 0, &east);
    assert!(east_rounds > 0, "{v}");
    assert_eq!(
        total(&v, 4, &east),
        east_rounds,
        "the series' last day is the day"
    );
    assert_eq!(
        total(&v, 0, &west),
        0,
        "the west's rounds are on its own, earlier day"
    );
    let w = report(west_day, "0");
    assert_eq!(w["periods"].as_array().unwrap().len(), 3);
    let west_rounds = total(&w, 0, &west);
    assert!(west_rounds > 0, "{w}");
    assert_eq!(total(&w, 0, &east), 0);
    let all = v["periods"][2]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["casino_id"] == "*")
        .unwrap()["rounds"]
        .as_u64()
        .unwrap();
    if east_day.format("%Y").to_string() == west_day.format("%Y").to_string() {
        assert_eq!(
            all, t.session.rounds as u64,
            "the year to date has every round"
        );
    }
    t.ledgerd.stop();
}

/// A slot floor with A2 destroyed (force majeure), and the operator's key in a file.
async fn floor_after_force_majeure(seed: u64) -> (SlotFloor, PathBuf) {
    let mut s = SlotFloor::start(plan(), seed, 2, 25).await;
    let ev = s.floor.fail(&"A2".into(), "destroyed", true);
    s.send(&ev).await;
    s.caught_up().await;
    let key = s.dir.path().join("operator-1.key");
    write_key_file(&key, &operator_key());
    (s, key)
}

async fn head(url: &str) -> u64 {
    QueryClient::new(ledger_agent::connect(url).await.unwrap())
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner()
        .index
}

#[tokio::test]
async fn jackpot_transfer_candidates_and_transfers() {
    let (s, key) = floor_after_force_majeure(21).await;
    let url = s.url.clone();
    let key = key.to_str().unwrap();
    let op = ["--operator-key", key, "--operator-id", "operator-1"];

    // --- candidates: JP-B1 (same model K and bets) is the one eligible target
    let (code, out, err) = ctl(&url, &["jackpot", "transfer-candidates", "A2"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with("Pool JP-A2 (jackpot) of machine A2: captive "),
        "{out}"
    );
    assert!(out.contains("force majeure: yes"), "{out}");
    // r.6: what is compared, said in the output.
    assert!(
        out.contains("compares (r.6 \"do mesmo modelo e apostas\"): model K, bets "),
        "{out}"
    );
    let jp_b1 = out
        .lines()
        .find(|l| l.contains("JP-B1"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        jp_b1.contains("same model and bets") && jp_b1.contains("yes"),
        "{jp_b1}"
    );
    let (code, out, _) = ctl(&url, &["jackpot", "transfer-candidates", "A2", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["pool_id"], "JP-A2");
    assert_eq!(v[0]["force_majeure"], true);
    assert_eq!(v[0]["candidates"][0]["pool_id"], "JP-B1");
    assert_eq!(v[0]["candidates"][0]["rank"], 1);
    assert_eq!(v[0]["candidates"][0]["eligible"], true);
    // B1 still works: its pools cannot be transferred.
    let (code, out, _) = ctl(&url, &["jackpot", "transfer-candidates", "B1"]);
    assert_eq!(code, 0);
    assert!(out.contains("force majeure: no"), "{out}");
    let (code, _, err) = ctl(&url, &["jackpot", "transfer-candidates", "Z9"]);
    assert_eq!(code, 1);
    assert!(err.contains("MACHINE `Z9`"), "{err}");

    // --- an ineligible target, without --force: refused, with the rule, nothing submitted
    let before = s.pools().await;
    let h = head(&url).await;
    let mut args = vec![
        "jackpot",
        "transfer",
        "--from-pool",
        "JP-A2",
        "--to-pool",
        "SJP",
    ];
    args.extend(op);
    let (code, out, err) = ctl(&url, &args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("nothing was submitted"), "{err}");
    assert!(
        err.contains("SLOT_TRANSFER_TARGET_INVALID  [P217/2007 T.III r.6]"),
        "{err}"
    );
    assert_eq!(head(&url).await, h, "nothing reached the ledger");

    // --- the same with --force: booked as carried out (P217/2007 T.III r.5: the source
    // restarts at 0, the target holds the whole value) and flagged
    let a2 = captive_e4(&before, "JP-A2");
    let sjp = captive_e4(&before, "SJP");
    args.extend(["--force", "--transfer-id", "TR-forced"]);
    let (code, out, err) = ctl(&url, &args);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains("warning: submitting an ineligible transfer"),
        "{err}"
    );
    assert!(out.contains("submitted: accepted operator-1#"), "{out}");
    assert!(
        out.contains("applied and FLAGGED (booked as carried out, P217/2007 T.III r.5)"),
        "{out}"
    );
    assert!(out.contains("SLOT_TRANSFER_TARGET_INVALID"), "{out}");
    let f = s.findings().await;
    assert_eq!(codes(&f), ["SLOT_TRANSFER_TARGET_INVALID"], "{f:?}");
    assert_eq!(f[0].pool_id, "JP-A2");
    let mid = s.pools().await;
    assert_eq!(captive_e4(&mid, "JP-A2"), 0);
    assert_eq!(captive_e4(&mid, "SJP"), sjp + a2);
    assert!(mid.conservation_holds);

    // --- a second transfer out of the same episode, even to the eligible target: the
    // validation refuses it. Of the whole (now empty) pool it is an amount of 0, which the
    // ledger refuses as malformed: it could not even be forced; of an amount, it is the
    // duplicate.
    let mut args = vec![
        "jackpot",
        "transfer",
        "--from-pool",
        "JP-A2",
        "--to-pool",
        "JP-B1",
    ];
    args.extend(op);
    let (code, _, err) = ctl(&url, &args);
    assert_eq!(code, 1);
    assert!(
        err.contains("cannot be read") && err.contains("`amount_cents`: must be positive"),
        "{err}"
    );
    args.extend(["--amount", "1"]);
    let (code, _, err) = ctl(&url, &args);
    assert_eq!(code, 1);
    assert!(err.contains("SLOT_TRANSFER_DUPLICATE"), "{err}");
    assert_eq!(s.findings().await.len(), 1, "no new finding");

    // --- the reading commands
    let (code, out, err) = ctl(&url, &["jackpot", "pools"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("conservation: holds"), "{out}");
    // A declaration stands beside what was held at its moment, and the difference.
    assert!(
        out.contains("held then") && out.contains("difference"),
        "{out}"
    );
    let sjp = out.lines().find(|l| l.starts_with("SJP ")).unwrap();
    assert!(
        sjp.contains("superjackpot") && sjp.contains("C1, C2"),
        "{sjp}"
    );
    let (code, out, _) = ctl(&url, &["jackpot", "pool", "JP-A2"]);
    assert_eq!(code, 0);
    let line = out
        .lines()
        .find(|l| l.contains("TR-forced"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("transfer out FLAGGED")
            && line.contains("no eligible route")
            && line.contains("booked as carried out: SLOT_TRANSFER_TARGET_INVALID"),
        "{line}"
    );
    assert!(out.contains("conservation   holds"), "{out}");
    let (code, out, _) = ctl(&url, &["jackpot", "liability", "--casino", "C2"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("Casino C2: "), "{out}");
    assert!(out.contains("joint with C1"), "{out}");
    let (code, out, _) = ctl(&url, &["jackpot", "liability"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("All casinos: ") && out.contains("each pool counted once"),
        "{out}"
    );
    let (code, out, _) = ctl(&url, &["jackpot", "machines"]);
    assert_eq!(code, 0);
    let a2_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("A2 "))
        .unwrap();
    assert!(a2_line.contains("FORCE MAJEURE (destroyed"), "{a2_line}");
    assert!(out.contains("Return to player"), "{out}");
    let (code, out, _) = ctl(&url, &["jackpot", "machines", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 4);
    assert_eq!(v[0]["return"]["theoretical_rtp_bp"], 9200);
}

#[tokio::test]
async fn jackpot_authorize_opens_the_inspectorates_route() {
    // B2 is the only machine of model L, with its own jackpot JP-B2.
    let mut p = plan();
    p.pools.push(jackpot::PoolConfigured {
        pool_id: "JP-B2".into(),
        kind: jackpot::PoolKind::Jackpot,
        casino_ids: vec!["C2".into()],
        member_machine_ids: vec!["B2".into()],
        member_table_ids: vec![],
        contribution_bp: 150,
        start_value_cents: 20_000,
        reset_value_cents: 20_000,
    });
    let mut s = SlotFloor::start(p, 22, 2, 25).await;
    let ev = s.floor.fail(&"B2".into(), "destroyed", true);
    s.send(&ev).await;
    s.caught_up().await;
    let url = s.url.clone();
    let op_key = s.dir.path().join("operator-1.key");
    write_key_file(&op_key, &operator_key());
    let igj_key = s.dir.path().join("igj.key");
    write_key_file(&igj_key, &regulator_key());
    let transfer = |auth: Option<&str>| {
        let mut a = vec![
            "jackpot".to_string(),
            "transfer".into(),
            "--from-pool".into(),
            "JP-B2".into(),
            "--to-pool".into(),
            "JP-A2".into(),
            "--operator-key".into(),
            op_key.to_str().unwrap().into(),
            "--operator-id".into(),
            "operator-1".into(),
        ];
        if let Some(x) = auth {
            a.extend(["--authorization".into(), x.to_string()]);
        }
        a
    };
    let run = |a: Vec<String>| {
        let r: Vec<&str> = a.iter().map(String::as_str).collect();
        ctl(&url, &r)
    };
    let (code, _, err) = run(transfer(None));
    assert_eq!(code, 1);
    assert!(err.contains("not authorised"), "{err}");
    // The operator key cannot sign for the inspectorate.
    let (code, _, err) = ctl(
        &url,
        &[
            "jackpot",
            "authorize",
            "--from-pool",
            "JP-B2",
            "--to-pool",
            "JP-A2",
            "--authorization",
            "IGJ-9",
            "--regulator-key",
            op_key.to_str().unwrap(),
            "--regulator-id",
            REGULATOR_ID,
        ],
    );
    assert_eq!(code, 1);
    assert!(err.contains("--regulator-key does not match"), "{err}");
    let (code, out, err) = ctl(
        &url,
        &[
            "jackpot",
            "authorize",
            "--from-pool",
            "JP-B2",
            "--to-pool",
            "JP-A2",
            "--authorization",
            "IGJ-9",
            "--reference",
            "despacho 9/2026",
            "--regulator-key",
            igj_key.to_str().unwrap(),
            "--regulator-id",
            REGULATOR_ID,
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("recorded: authorisation IGJ-9"), "{out}");
    let (code, out, _) = ctl(&url, &["jackpot", "transfer-candidates", "B2"]);
    assert_eq!(code, 0);
    let line = out.lines().find(|l| l.contains("JP-A2")).unwrap();
    assert!(
        line.contains("IGJ authorisation IGJ-9") && line.contains("yes"),
        "{line}"
    );
    let before = s.pools().await;
    let (code, out, err) = run(transfer(Some("IGJ-9")));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("applied: ") && out.contains("IGJ authorisation IGJ-9"),
        "{out}"
    );
    let after = s.pools().await;
    assert_eq!(captive_e4(&after, "JP-B2"), 0);
    assert_eq!(
        captive_e4(&after, "JP-A2"),
        captive_e4(&before, "JP-A2") + captive_e4(&before, "JP-B2")
    );
    assert!(s.findings().await.is_empty());
}
