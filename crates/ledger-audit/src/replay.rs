//! The replayer: chain entries in, findings and adjudicated rounds out. One [`Auditor`] (table
//! games, lifecycle, security) and one jackpot [`Book`] (machines, pools, trust, transfers, table
//! jackpots) advance in lockstep, and every finding of either goes into the auditor's one
//! sequence and digest. Deterministic: the same chain gives the same findings, byte for byte,
//! whether replayed live or from genesis.

use audit::{
    AuditInput, AuditSettings, Auditor, AuditorSnapshot, EntryMeta, Finding, FindingsDigest,
    JackpotValues, RoundSummary, RulesEngines,
};
use jackpot::{Book, EventCtx};
use ledger_proto::v1;
use rules::TableState;
use rules_core::{Cents, Confidence, Severity};
use serde::{Deserialize, Serialize};

use ledger_convert::{ConvertError, Routed, route, route_parts_timed};

/// Codes of the integration itself.
pub mod codes {
    /// A stored entry the audit cannot decode (the store is not what ingest accepted).
    pub const ENTRY_UNREADABLE: &str = "AUDIT_ENTRY_UNREADABLE";
    /// A slot, pool or inspectorate event the jackpot accounts cannot make sense of (an unknown
    /// pool or machine, an amount out of range): nothing moved.
    pub const JACKPOT_EVENT_REFUSED: &str = "JACKPOT_EVENT_REFUSED";
}

/// What one entry produced.
#[derive(Debug, Default)]
pub struct Step {
    pub findings: Vec<Finding>,
    pub rounds: Vec<RoundSummary>,
    /// The jackpot book's per-event detail (pool history lines, meter increases, day totals),
    /// for the store the queries read it from.
    pub detail: Vec<jackpot::Detail>,
    /// A review of a finding the entry records (it changes no finding and no digest).
    pub reviews: Vec<crate::review::Review>,
}

/// Everything the replayer needs to resume.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayerSnapshot {
    pub auditor: AuditorSnapshot<TableState>,
    /// Hands its detail out ([`Book::hand_out_detail`]): its size is the floor's.
    pub book: Book,
}

/// A chain entry decoded and converted for the replayer: the part of replaying that depends on
/// the entry alone (about half of a replay's work), so it can run on other threads, ahead of the
/// replayer, which applies these in chain order ([`Replayer::apply_prepared`]).
#[derive(Debug)]
pub struct Prepared {
    index: u64,
    received_at_ms: i64,
    /// An event's own time (its signer's clock), for the device clock check.
    occurred_at_ms: Option<i64>,
    routed: Result<(EntryMeta, Routed), ConvertError>,
    review: Option<crate::review::Review>,
}

/// The one field of an `EventBody` the clock check reads (the rest is skipped, not decoded).
#[derive(Clone, PartialEq, prost::Message)]
struct EventTime {
    #[prost(int64, tag = "3")]
    occurred_at_ms: i64,
}

fn occurred_at(kind: i32, body: &[u8]) -> Option<i64> {
    use prost::Message;
    (kind == v1::RecordKind::Event as i32)
        .then(|| EventTime::decode(body).ok().map(|t| t.occurred_at_ms))
        .flatten()
}

impl Prepared {
    pub fn of(entry: &v1::ChainEntry) -> Prepared {
        Prepared {
            index: entry.index,
            received_at_ms: entry.received_at_ms,
            occurred_at_ms: occurred_at(entry.kind, &entry.body),
            routed: route(entry),
            review: crate::review::Review::of_entry(
                entry.index,
                entry.received_at_ms,
                entry.kind,
                &entry.body,
            ),
        }
    }

    /// The same from the entry's fields as a chunk reader sees them.
    pub fn of_view(entry: &ledger_store::EntryView<'_>) -> Prepared {
        // An event's body decoded once for both its routing and its time.
        let (occurred_at_ms, routed) =
            match route_parts_timed(entry.index, entry.received_at_ms, entry.kind, &entry.body) {
                (Some(at), routed) => (Some(at), routed),
                (None, routed) => (occurred_at(entry.kind, &entry.body), routed),
            };
        Prepared {
            index: entry.index,
            received_at_ms: entry.received_at_ms,
            occurred_at_ms,
            routed,
            review: crate::review::Review::of_entry(
                entry.index,
                entry.received_at_ms,
                entry.kind,
                &entry.body,
            ),
        }
    }

    /// Ledger index of the entry.
    pub fn index(&self) -> u64 {
        self.index
    }
}

/// The replayer.
pub struct Replayer {
    auditor: Auditor<RulesEngines>,
    /// Hands its per-event detail out: every [`Step`] carries what an entry added.
    book: Book,
}

struct BookValues<'a>(&'a Book);

impl JackpotValues for BookValues<'_> {
    fn value_cents(&self, pool_id: &str) -> Option<Cents> {
        self.0
            .pool(pool_id)
            .map(|p| jackpot::amount::to_cents(p.captive_e4))
    }
}

/// The audit settings of the product (live and replay must agree).
pub fn settings(keep_round_states: bool) -> AuditSettings {
    AuditSettings {
        keep_round_states,
        ..AuditSettings::default()
    }
}

/// [`settings`] with the device clock drift threshold (`[audit] device_clock_drift_ms`; an
/// offline replay must be given the same to find the same).
pub fn settings_with(keep_round_states: bool, device_clock_drift_ms: i64) -> AuditSettings {
    AuditSettings {
        device_clock_drift_ms,
        ..settings(keep_round_states)
    }
}

impl Replayer {
    /// A replayer at genesis.
    pub fn new(settings: AuditSettings) -> Replayer {
        let mut book = Book::new();
        book.hand_out_detail();
        Replayer {
            auditor: Auditor::new(RulesEngines, settings),
            book,
        }
    }

    /// Resume from a snapshot. (A book that held its detail hands it out with the next step.)
    pub fn restore(snap: ReplayerSnapshot) -> Result<Replayer, rules_core::ConfigError> {
        let mut book = snap.book;
        book.hand_out_detail();
        Ok(Replayer {
            auditor: Auditor::restore(RulesEngines, snap.auditor)?,
            book,
        })
    }

    pub fn snapshot(&self) -> ReplayerSnapshot {
        ReplayerSnapshot {
            auditor: self.auditor.snapshot(),
            book: self.book.clone(),
        }
    }

    /// Ledger index of the last entry applied.
    pub fn position(&self) -> Option<u64> {
        self.auditor.position()
    }

    pub fn digest(&self) -> FindingsDigest {
        self.auditor.digest()
    }

    /// The jackpot accounts.
    pub fn book(&self) -> &Book {
        &self.book
    }

    /// Rounds closed and adjudicated so far.
    pub fn rounds_closed(&self) -> u64 {
        self.auditor.rounds_closed()
    }

    pub fn open_rounds(&self) -> usize {
        self.auditor.open_rounds()
    }

    /// Apply one chain entry (entries in chain order; an entry at or before the position is
    /// ignored).
    pub fn apply(&mut self, entry: &v1::ChainEntry) -> Step {
        self.apply_prepared(Prepared::of(entry))
    }

    /// Apply an entry [`Prepared`] (on any thread) from the chain, in chain order; the same as
    /// [`Replayer::apply`] of that entry.
    pub fn apply_prepared(&mut self, entry: Prepared) -> Step {
        let mut step = self.apply_entry(entry);
        step.detail = self.book.take_detail();
        step
    }

    fn apply_entry(&mut self, entry: Prepared) -> Step {
        let mut step = Step::default();
        if self.position().is_some_and(|p| entry.index <= p) {
            return step;
        }
        step.reviews.extend(entry.review);
        let (meta, routed) = match entry.routed {
            Ok(r) => r,
            Err(e) => {
                let meta = EntryMeta {
                    index: entry.index,
                    received_at_ms: entry.received_at_ms,
                    signer: String::new(),
                };
                step.findings
                    .extend(self.auditor.apply(&meta, AuditInput::Tick).findings);
                let f = Finding {
                    severity: Severity::Critical,
                    code: codes::ENTRY_UNREADABLE.to_string(),
                    citation: audit::finding::RECORD_INTEGRITY.to_string(),
                    message: format!(
                        "the stored entry cannot be read: {e}; run `ledgerctl verify`"
                    ),
                    ..self.auditor.blank(&meta)
                };
                step.findings.push(self.auditor.record_external(f));
                return step;
            }
        };
        if let Some(at) = entry.occurred_at_ms {
            step.findings
                .extend(self.auditor.device_clock(&meta, at).findings);
        }
        match routed {
            Routed::Audit(input) => {
                let out = self
                    .auditor
                    .apply_with(&meta, input, &BookValues(&self.book));
                step.findings.extend(out.findings);
                for (summary, adj) in out.rounds.iter().zip(&out.adjudications) {
                    let (Some(pool), Some(account)) = (&summary.jackpot_pool_id, &adj.jackpot)
                    else {
                        continue;
                    };
                    let event = jackpot::Event::TableJackpotRound(jackpot::TableJackpotRound {
                        pool_id: pool.as_str().into(),
                        table_id: summary.table_id.as_str().into(),
                        round_id: summary.round_id.as_str().into(),
                        game: summary.game,
                        account: account.clone(),
                        wins: adj.jackpot_wins.clone(),
                    });
                    self.apply_book(&meta, &event, &mut step);
                }
                step.rounds = out.rounds;
            }
            Routed::Jackpot(event) => {
                // Time passes for the table audit first (round deadlines), then the accounts.
                step.findings
                    .extend(self.auditor.apply(&meta, AuditInput::Tick).findings);
                self.apply_book(&meta, &event, &mut step);
            }
            Routed::Tick => {
                step.findings
                    .extend(self.auditor.apply(&meta, AuditInput::Tick).findings);
            }
        }
        step
    }

    fn apply_book(&mut self, meta: &EntryMeta, event: &jackpot::Event, step: &mut Step) {
        let ctx = EventCtx {
            ledger_index: meta.index,
            at_ms: meta.received_at_ms,
        };
        match self.book.apply(event, ctx) {
            Ok(found) => {
                for f in found {
                    let finding = self.book_finding(meta, f);
                    step.findings.push(self.auditor.record_external(finding));
                }
            }
            Err(e) => {
                let f = Finding {
                    severity: Severity::High,
                    code: codes::JACKPOT_EVENT_REFUSED.to_string(),
                    citation: "P217/2007 T.III r.5 (captive values held in trust, on the record)"
                        .to_string(),
                    message: format!("the jackpot accounts refuse the event: {e}; nothing moved"),
                    ..self.auditor.blank(meta)
                };
                step.findings.push(self.auditor.record_external(f));
            }
        }
    }

    fn book_finding(&self, meta: &EntryMeta, f: jackpot::Finding) -> Finding {
        let mut evidence = f.evidence.clone();
        evidence.push(meta.index);
        Finding {
            severity: f.severity,
            confidence: match f.confidence {
                Confidence::Certain => Confidence::Certain,
                Confidence::Review => Confidence::Review,
            },
            code: f.code.to_string(),
            citation: f.citation.to_string(),
            casino_id: f.casino_id.as_ref().map(|c| c.to_string()),
            table_id: f.table_id.as_ref().map(|c| c.to_string()),
            machine_id: f.machine_id.as_ref().map(|c| c.to_string()),
            pool_id: f.pool_id.as_ref().map(|c| c.to_string()),
            due_cents: f.amounts.map(|a| a.due_cents),
            reported_cents: f.amounts.map(|a| a.reported_cents),
            evidence,
            message: f.message,
            ..self.auditor.blank(meta)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// The test chain's entries, genesis first.
    fn session() -> Vec<v1::ChainEntry> {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, head) = crate::testdata::chain(tmp.path());
        chain.entries(0, head).map(|e| e.unwrap()).collect()
    }

    fn event(index: u64, at_ms: i64, payload: v1::event_body::Payload) -> v1::ChainEntry {
        v1::ChainEntry {
            format: 1,
            index,
            received_at_ms: at_ms,
            kind: v1::RecordKind::Event as i32,
            body: v1::EventBody {
                device_id: "op".into(),
                sequence: index,
                occurred_at_ms: at_ms,
                payload: Some(payload),
            }
            .encode_to_vec(),
            ..Default::default()
        }
    }

    /// The replayer's counts follow the session: the findings it handed out are its digest's,
    /// the rounds it closed its count, several rounds are open at once midway and none before
    /// the first entry; the book holds the floor; a round of a table jackpot starts from the
    /// pool's value held in the book before the round's entry.
    #[test]
    fn the_replayers_counts_follow_what_it_handed_out() {
        let entries = session();
        let mut r = Replayer::new(settings(true));
        assert_eq!((r.open_rounds(), r.rounds_closed()), (0, 0));
        let (mut findings, mut rounds, mut most_open, mut jackpot_rounds) = (0, 0, 0, 0);
        for e in &entries {
            let prepared = Prepared::of(e);
            assert_eq!(prepared.index(), e.index);
            let values: std::collections::BTreeMap<String, Cents> = r
                .book()
                .pools()
                .map(|p| (p.id.to_string(), jackpot::amount::to_cents(p.captive_e4)))
                .collect();
            let step = r.apply_prepared(prepared);
            findings += step.findings.len() as u64;
            rounds += step.rounds.len() as u64;
            for s in &step.rounds {
                if let Some(pool) = &s.jackpot_pool_id {
                    jackpot_rounds += 1;
                    assert_eq!(
                        s.jackpot_before_cents,
                        Some(values[pool.as_str()]),
                        "round {} of pool {pool}",
                        s.round_id
                    );
                }
            }
            most_open = most_open.max(r.open_rounds());
            assert_eq!(r.rounds_closed(), rounds);
        }
        assert!(
            jackpot_rounds > 0 && rounds > 500,
            "{jackpot_rounds} {rounds}"
        );
        assert!(most_open >= 2, "{most_open}");
        assert_eq!(r.digest().count, findings);
        assert_eq!(r.digest(), r.snapshot().auditor.digest);
        assert!(findings >= 5);
        assert!(r.book().machines().count() >= 2);
    }

    /// The product's settings: the default audit settings, keeping round states or not, with a
    /// clock-drift threshold when given one.
    #[test]
    fn the_products_settings_are_the_defaults_with_the_choices_made() {
        assert_eq!(settings(false), AuditSettings::default());
        assert!(settings(true).keep_round_states);
        let with = settings_with(true, 123_000);
        assert!(with.keep_round_states);
        assert_eq!(with.device_clock_drift_ms, 123_000);
        assert_eq!(
            AuditSettings {
                device_clock_drift_ms: AuditSettings::default().device_clock_drift_ms,
                ..with
            },
            settings(true)
        );
    }

    /// An entry that does not decode is one critical finding citing the record's integrity;
    /// an event the jackpot accounts refuse is one high finding citing the captive values'
    /// trust; both say what happened, at the entry.
    #[test]
    fn unreadable_entries_and_refused_jackpot_events_are_findings() {
        let mut r = Replayer::new(settings(false));
        let garbage = v1::ChainEntry {
            format: 1,
            index: 1,
            received_at_ms: 5_000,
            kind: v1::RecordKind::Event as i32,
            body: vec![0xff; 9],
            ..Default::default()
        };
        let step = r.apply(&garbage);
        let [f] = &step.findings[..] else {
            panic!("{:?}", step.findings)
        };
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.code, codes::ENTRY_UNREADABLE);
        assert_eq!(f.citation, audit::finding::RECORD_INTEGRITY);
        assert!(
            f.message.starts_with("the stored entry cannot be read: ")
                && f.message.ends_with("; run `ledgerctl verify`"),
            "{}",
            f.message
        );
        assert_eq!((f.at_ms, f.seq), (5_000, 0));

        let unknown_pool = event(
            2,
            6_000,
            v1::event_body::Payload::CaptiveValueReported(v1::CaptiveValueReported {
                pool_id: "nowhere".into(),
                value_cents: 100,
            }),
        );
        let step = r.apply(&unknown_pool);
        let [f] = &step.findings[..] else {
            panic!("{:?}", step.findings)
        };
        assert_eq!(f.severity, Severity::High);
        assert_eq!(f.code, codes::JACKPOT_EVENT_REFUSED);
        assert_eq!(
            f.citation,
            "P217/2007 T.III r.5 (captive values held in trust, on the record)"
        );
        assert!(
            f.message
                .starts_with("the jackpot accounts refuse the event: ")
                && f.message.contains("nowhere")
                && f.message.ends_with("; nothing moved"),
            "{}",
            f.message
        );
        assert_eq!((f.at_ms, f.seq), (6_000, 1));
        assert_eq!(r.digest().count, 2);
    }

    /// A finding of the jackpot accounts becomes the audit's with every field carried over,
    /// the entry added to its evidence: checked against a twin of the book that applies each
    /// slot or pool event of the session on its own.
    #[test]
    fn the_books_findings_are_carried_over_whole() {
        let entries = session();
        let mut r = Replayer::new(settings(false));
        let (mut compared, mut table_jackpot) = (0, 0);
        for e in &entries {
            let prepared = Prepared::of(e);
            let event = match &prepared.routed {
                Ok((_, Routed::Jackpot(event))) => Some(event.clone()),
                _ => None,
            };
            let Some(event) = event else {
                let step = r.apply_prepared(prepared);
                table_jackpot += step
                    .findings
                    .iter()
                    .filter(|f| f.pool_id.is_some() && f.table_id.is_some())
                    .count();
                continue;
            };
            let mut twin = r.book().clone();
            let ctx = EventCtx {
                ledger_index: e.index,
                at_ms: e.received_at_ms,
            };
            let want = twin.apply(&event, ctx).unwrap();
            let step = r.apply_prepared(prepared);
            // The table audit's own findings (round deadlines) come first.
            let got = &step.findings[step.findings.len() - want.len()..];
            for (f, w) in got.iter().zip(&want) {
                let mut evidence = w.evidence.clone();
                evidence.push(e.index);
                // Ascending, each index once (as every finding's evidence).
                evidence.sort_unstable();
                evidence.dedup();
                let text = |t: &Option<rules_core::Id>| t.as_ref().map(|t| t.to_string());
                assert_eq!(f.severity, w.severity);
                assert_eq!(f.confidence, w.confidence);
                assert_eq!(f.code, w.code.to_string());
                assert_eq!(f.citation, w.citation.to_string());
                assert_eq!(f.casino_id, text(&w.casino_id));
                assert_eq!(f.table_id, text(&w.table_id));
                assert_eq!(f.machine_id, text(&w.machine_id));
                assert_eq!(f.pool_id, text(&w.pool_id));
                assert_eq!(f.due_cents, w.amounts.map(|a| a.due_cents));
                assert_eq!(f.reported_cents, w.amounts.map(|a| a.reported_cents));
                assert_eq!(f.evidence, evidence);
                assert_eq!(f.message, w.message);
                assert_eq!(f.at_ms, e.received_at_ms);
                compared += 1;
            }
        }
        assert!(compared >= 3, "{compared}");
        // The session's table jackpots are all in order: their fields are checked below.
        assert_eq!(table_jackpot, 0);
    }

    /// Every field of a book's finding, a table's too, carried over; the entry's index added to
    /// its evidence; the rest from the entry (its time) as the auditor's own findings have it.
    #[test]
    fn a_books_finding_is_carried_over_field_by_field() {
        let r = Replayer::new(settings(false));
        let meta = EntryMeta {
            index: 41,
            received_at_ms: 9_000,
            signer: "table-1".into(),
        };
        let id = |s: &str| Some(rules_core::Id::from(s));
        let f = jackpot::Finding {
            code: "JACKPOT_TABLE_CONTRIBUTION".into(),
            severity: Severity::High,
            confidence: Confidence::Review,
            citation: "P217/2007 T.III r.6".into(),
            message: "the contribution is short".into(),
            machine_id: id("m-1"),
            table_id: id("t-1"),
            model_id: id("model-1"),
            pool_id: id("p-1"),
            casino_id: id("c-1"),
            amounts: Some(jackpot::Amounts::new(1_234_567, 120)),
            evidence: vec![3, 17],
        };
        let want = Finding {
            severity: Severity::High,
            confidence: Confidence::Review,
            code: "JACKPOT_TABLE_CONTRIBUTION".into(),
            citation: "P217/2007 T.III r.6".into(),
            casino_id: Some("c-1".into()),
            table_id: Some("t-1".into()),
            machine_id: Some("m-1".into()),
            pool_id: Some("p-1".into()),
            due_cents: Some(123),
            reported_cents: Some(120),
            evidence: vec![3, 17, 41],
            message: "the contribution is short".into(),
            ..r.auditor.blank(&meta)
        };
        assert_eq!(want.at_ms, 9_000);
        assert_eq!(r.book_finding(&meta, f.clone()), want);
        let certain = jackpot::Finding {
            confidence: Confidence::Certain,
            amounts: None,
            ..f
        };
        let got = r.book_finding(&meta, certain);
        assert_eq!(got.confidence, Confidence::Certain);
        assert_eq!((got.due_cents, got.reported_cents), (None, None));
    }
}
