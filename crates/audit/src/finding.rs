//! Findings: what the audit keeps, cites and serves.

use rules_core::{Cents, Confidence, GameId, Severity};
use serde::{Deserialize, Serialize};

/// The audit's own codes (the rule engines' codes come from the digests).
pub mod codes {
    /// A round was opened at a table that has no configuration in force.
    pub const TABLE_NOT_CONFIGURED: &str = "AUDIT_TABLE_NOT_CONFIGURED";
    /// A table configuration the engine refuses (names the field).
    pub const TABLE_CONFIG_REJECTED: &str = "AUDIT_TABLE_CONFIG_REJECTED";
    /// A table whose game has no rule engine. There must be none.
    pub const NO_ENGINE: &str = "AUDIT_NO_ENGINE";
    /// A round id opened twice at one table.
    pub const ROUND_REOPENED: &str = "AUDIT_ROUND_REOPENED";
    /// An event (or settlement) for a round that was never opened.
    pub const EVENT_OUTSIDE_ROUND: &str = "AUDIT_EVENT_OUTSIDE_ROUND";
    /// An event for a round already settled or voided (e.g. cards after settlement).
    pub const EVENT_AFTER_SETTLEMENT: &str = "AUDIT_EVENT_AFTER_SETTLEMENT";
    /// A bet recorded after the round's outcome (the ball at rest, the cussec dice shown).
    pub const BET_AFTER_OUTCOME: &str = "AUDIT_BET_AFTER_OUTCOME";
    /// A round the audit stopped holding unsettled, because its table had too many rounds open
    /// (`AuditSettings::max_open_rounds`); it is not adjudicated, and what comes for it later
    /// is flagged with this code too.
    pub const ROUND_ABANDONED: &str = "AUDIT_ROUND_ABANDONED";
    /// A round with more events than the audit holds for one round
    /// (`AuditSettings::max_round_events`): flagged when it passes the limit and when it closes,
    /// and not adjudicated.
    pub const ROUND_TOO_LONG: &str = "AUDIT_ROUND_TOO_LONG";
    /// A round opened and not settled within the configured time.
    pub const ROUND_NOT_SETTLED: &str = "AUDIT_ROUND_NOT_SETTLED";
    /// A round record the engine cannot make sense of (names the event or bet).
    pub const ROUND_UNREADABLE: &str = "AUDIT_ROUND_UNREADABLE";
    /// A reported house take (commission, cagnotte) different from the due one.
    pub const HOUSE_TAKE_MISMATCH: &str = "AUDIT_HOUSE_TAKE_MISMATCH";
    /// A device's clock off the ledger's received time by more than
    /// `AuditSettings::device_clock_drift_ms`, once per device per episode ([`crate::clock`]).
    pub const DEVICE_CLOCK_DRIFT: &str = "AUDIT_DEVICE_CLOCK_DRIFT";
}

/// Citation of [`codes::DEVICE_CLOCK_DRIFT`]: the regulations have no rule on system clocks.
pub const CLOCK_CITATION: &str = "no rule of the regulations on system clocks (none in the seeds); \
     casino-ledger: a device's own event times must agree with the ledger's received time";

/// Longest finding code a query may name (the longest real ones are about 40 bytes).
pub const MAX_CODE_LEN: usize = 64;

/// Whether `code` has the form of a finding code: a family prefix, an underscore and a name, in
/// capitals, digits and underscores (`RL_WRONG_PAYOUT`, `AUDIT_ROUND_NOT_SETTLED`,
/// `SECURITY_EQUIVOCATION`), at most [`MAX_CODE_LEN`] bytes. Every code the engines, the audit
/// and the jackpot accounts produce has it. There is no closed list of codes to check a name
/// against: the rule engines' codes live with their rules.
pub fn is_well_formed_code(code: &str) -> bool {
    let b = code.as_bytes();
    b.len() <= MAX_CODE_LEN
        && b.first().is_some_and(u8::is_ascii_uppercase)
        && b.last().is_some_and(|c| *c != b'_')
        && b.contains(&b'_')
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

/// Citation used by the audit's lifecycle findings: they enforce the integrity of the record the
/// regulations presuppose, not a numbered rule of a game.
pub const RECORD_INTEGRITY: &str =
    "casino-ledger record integrity (every round opened, played and settled once, on the record)";

/// One finding.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id: derived from the finding's content, identical in every replay.
    pub id: String,
    /// Position in the audit's finding sequence (0-based), identical in every replay.
    pub seq: u64,
    pub severity: Severity,
    #[serde(default)]
    pub confidence: Confidence,
    /// Stable code: an engine's code from the rule digests, or `AUDIT_*` / `SECURITY_*`.
    pub code: String,
    /// The rule enforced.
    pub citation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub casino_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bet_id: Option<String>,
    /// What the rules say was due (cents), where money is at stake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_cents: Option<Cents>,
    /// What the casino reported (cents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_cents: Option<Cents>,
    /// Ledger indexes of the evidence, ascending.
    pub evidence: Vec<u64>,
    /// Ledger receive time of the entry that produced the finding.
    pub at_ms: i64,
    /// One line for humans, naming the facts.
    pub message: String,
}

impl Finding {
    /// The canonical bytes of a finding: its JSON with fields in declaration order (no maps).
    pub fn canonical_bytes(&self) -> Vec<u8> {
        // Serialising a struct of plain fields cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Compute and set the content-derived id (over every field but `id`).
    pub(crate) fn seal(&mut self) {
        self.id.clear();
        let mut h = blake3::Hasher::new_derive_key("casino-ledger 2026-11 audit finding id v1");
        h.update(&self.canonical_bytes());
        let hash = h.finalize();
        self.id = format!("F{}", &hash.to_hex()[..23]);
    }
}

/// A running digest over the canonical bytes of every finding, in order:
/// `d_0 = 0^32`, `d_n = blake3_derive("casino-ledger 2026-11 findings digest v1", d_{n-1} || len || bytes)`.
/// Resumable (it is only 32 bytes and a count) and identical for a live run and a full replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingsDigest {
    pub count: u64,
    #[serde(with = "hex32")]
    pub digest: [u8; 32],
}

impl FindingsDigest {
    pub fn add(&mut self, finding: &Finding) {
        let bytes = finding.canonical_bytes();
        let mut h = blake3::Hasher::new_derive_key("casino-ledger 2026-11 findings digest v1");
        h.update(&self.digest);
        h.update(&(bytes.len() as u64).to_be_bytes());
        h.update(&bytes);
        self.digest = *h.finalize().as_bytes();
        self.count += 1;
    }

    pub fn hex(&self) -> String {
        self.digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        let h: String = v.iter().map(|b| format!("{b:02x}")).collect();
        s.serialize_str(&h)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let s = String::deserialize(d)?;
        if s.len() != 64 {
            return Err(serde::de::Error::custom("digest must be 64 hex digits"));
        }
        let mut out = [0u8; 32];
        for (i, b) in out.iter_mut().enumerate() {
            *b = u8::from_str_radix(s.get(2 * i..2 * i + 2).unwrap_or("zz"), 16)
                .map_err(serde::de::Error::custom)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(code: &str) -> Finding {
        Finding {
            id: String::new(),
            seq: 0,
            severity: Severity::High,
            confidence: Confidence::Certain,
            code: code.into(),
            citation: "c".into(),
            casino_id: None,
            table_id: Some("t1".into()),
            machine_id: None,
            pool_id: None,
            device_id: None,
            game: Some(GameId::RouletteFrench),
            round_id: Some("r1".into()),
            bet_id: None,
            due_cents: Some(3500),
            reported_cents: Some(3600),
            evidence: vec![3, 9],
            at_ms: 5,
            message: "m".into(),
        }
    }

    #[test]
    fn well_formed_codes() {
        for c in [
            "RL_WRONG_PAYOUT",
            "SECURITY_EQUIVOCATION",
            "CF_R104_L",
            codes::TABLE_NOT_CONFIGURED,
            codes::TABLE_CONFIG_REJECTED,
            codes::NO_ENGINE,
            codes::ROUND_REOPENED,
            codes::EVENT_OUTSIDE_ROUND,
            codes::EVENT_AFTER_SETTLEMENT,
            codes::BET_AFTER_OUTCOME,
            codes::ROUND_NOT_SETTLED,
            codes::ROUND_UNREADABLE,
            codes::HOUSE_TAKE_MISMATCH,
        ] {
            assert!(is_well_formed_code(c), "{c}");
        }
        for c in [
            "",
            "NONE",
            "rl_wrong_payout",
            "RL_WRONG PAYOUT",
            "_RL",
            "RL_",
            "1RL_X",
            "RL_WRONG_PAYOUT\0",
            &format!("RL_{}", "X".repeat(62)),
        ] {
            assert!(!is_well_formed_code(c), "{c:?}");
        }
    }

    #[test]
    fn ids_are_content_derived_and_stable() {
        let mut a = f("RL_WRONG_PAYOUT");
        let mut b = f("RL_WRONG_PAYOUT");
        a.seal();
        b.seal();
        assert_eq!(a.id, b.id);
        assert_eq!(a.id.len(), 24);
        let mut c = f("RL_LATE_BET");
        c.seal();
        assert_ne!(a.id, c.id);
    }

    /// The id and digest are a stored format: live audits and replays of years-old ledgers
    /// compare them byte for byte, so they are pinned to known values.
    #[test]
    fn ids_and_digests_are_pinned() {
        let mut a = f("RL_WRONG_PAYOUT");
        a.seal();
        let mut d = FindingsDigest::default();
        d.add(&a);
        d.add(&a);
        assert_eq!(a.id, "F685d45dfe407c2c986c78ab");
        assert_eq!(d.count, 2);
        assert_eq!(
            d.hex(),
            "8c32d293360efee8021486a11b20e1d9884d4af4c4147b016a597c441e8739bc"
        );
        let j = serde_json::to_string(&d).unwrap();
        assert_eq!(j, format!(r#"{{"count":2,"digest":"{}"}}"#, d.hex()));
        assert_eq!(serde_json::from_str::<FindingsDigest>(&j).unwrap(), d);
        for bad in [
            r#"{"count":2,"digest":"00"}"#.to_string(),
            format!(r#"{{"count":2,"digest":"{}zz"}}"#, &d.hex()[..62]),
        ] {
            assert!(
                serde_json::from_str::<FindingsDigest>(&bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn digest_depends_on_every_finding_and_order() {
        let (mut a, mut b) = (f("A"), f("B"));
        a.seal();
        b.seal();
        let mut d1 = FindingsDigest::default();
        d1.add(&a);
        d1.add(&b);
        let mut d2 = FindingsDigest::default();
        d2.add(&b);
        d2.add(&a);
        assert_ne!(d1, d2);
        assert_eq!(d1.count, 2);
        let j = serde_json::to_string(&d1).unwrap();
        assert_eq!(serde_json::from_str::<FindingsDigest>(&j).unwrap(), d1);
    }
}
