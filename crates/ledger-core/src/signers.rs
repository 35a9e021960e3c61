//! Who may sign what: the registry of signers (registered devices and configured principals) and
//! the authorisation rules. The ledger's writer and the offline verifier both apply these rules,
//! each to its own copy of the registry (sled there, memory here).

use ed25519_dalek::VerifyingKey;
use ledger_proto::v1;

use crate::event::{DeviceKind, DeviceRegistration, Payload};
use crate::signing::parse_public_key;

/// What a signer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SignerRole {
    Table,
    Machine,
    Operator,
    Regulator,
}

impl SignerRole {
    pub fn as_str(self) -> &'static str {
        match self {
            SignerRole::Table => "table",
            SignerRole::Machine => "machine",
            SignerRole::Operator => "operator",
            SignerRole::Regulator => "regulator",
        }
    }

    pub fn parse(s: &str) -> Option<SignerRole> {
        Some(match s {
            "table" => SignerRole::Table,
            "machine" => SignerRole::Machine,
            "operator" => SignerRole::Operator,
            "regulator" => SignerRole::Regulator,
            _ => return None,
        })
    }

    pub fn is_principal(self) -> bool {
        matches!(self, SignerRole::Operator | SignerRole::Regulator)
    }
}

/// A signer and its derived state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signer {
    pub id: String,
    pub role: SignerRole,
    pub key: VerifyingKey,
    pub casino_id: String,
    pub table_ids: Vec<String>,
    pub machine_id: String,
    pub model_id: String,
    pub bet_values_cents: Vec<i64>,
    pub description: String,
    pub registered_at_index: u64,
    pub revoked_at_index: Option<u64>,
    /// Last accepted sequence number (0 = none yet) and the entry holding it.
    pub last_sequence: u64,
    pub last_index: u64,
}

impl Signer {
    /// A device from its registration at entry `index`.
    pub fn from_registration(r: &DeviceRegistration, index: u64) -> Signer {
        Signer {
            id: r.device_id.clone(),
            role: match r.kind {
                DeviceKind::Table => SignerRole::Table,
                DeviceKind::Machine => SignerRole::Machine,
            },
            key: r.public_key,
            casino_id: r.casino_id.clone(),
            table_ids: r.table_ids.clone(),
            machine_id: r.machine_id.clone(),
            model_id: r.model_id.clone(),
            bet_values_cents: r.bet_values_cents.clone(),
            description: r.description.clone(),
            registered_at_index: index,
            revoked_at_index: None,
            last_sequence: 0,
            last_index: 0,
        }
    }

    /// A principal declared at entry `index`.
    pub fn principal(id: &str, role: SignerRole, key: VerifyingKey, index: u64) -> Signer {
        Signer {
            id: id.to_string(),
            role,
            key,
            casino_id: String::new(),
            table_ids: Vec::new(),
            machine_id: String::new(),
            model_id: String::new(),
            bet_values_cents: Vec::new(),
            description: String::new(),
            registered_at_index: index,
            revoked_at_index: None,
            last_sequence: 0,
            last_index: 0,
        }
    }

    pub fn to_proto(&self) -> v1::DeviceInfo {
        v1::DeviceInfo {
            device_id: self.id.clone(),
            kind: self.role.as_str().to_string(),
            public_key: self.key.as_bytes().to_vec(),
            casino_id: self.casino_id.clone(),
            table_ids: self.table_ids.clone(),
            machine_id: self.machine_id.clone(),
            model_id: self.model_id.clone(),
            bet_values_cents: self.bet_values_cents.clone(),
            description: self.description.clone(),
            registered_at_index: self.registered_at_index,
            revoked: self.revoked_at_index.is_some(),
            revoked_at_index: self.revoked_at_index.unwrap_or(0),
            last_sequence: self.last_sequence,
            last_index: self.last_index,
        }
    }

    pub fn from_proto(d: &v1::DeviceInfo) -> Result<Signer, String> {
        Ok(Signer {
            id: d.device_id.clone(),
            role: SignerRole::parse(&d.kind)
                .ok_or_else(|| format!("unknown signer kind {:?}", d.kind))?,
            key: parse_public_key(&d.public_key).map_err(|e| e.to_string())?,
            casino_id: d.casino_id.clone(),
            table_ids: d.table_ids.clone(),
            machine_id: d.machine_id.clone(),
            model_id: d.model_id.clone(),
            bet_values_cents: d.bet_values_cents.clone(),
            description: d.description.clone(),
            registered_at_index: d.registered_at_index,
            revoked_at_index: d.revoked.then_some(d.revoked_at_index),
            last_sequence: d.last_sequence,
            last_index: d.last_index,
        })
    }
}

/// May `signer` sign `payload`? The error says why not.
pub fn authorize(signer: &Signer, payload: &Payload) -> Result<(), String> {
    let role = signer.role;
    let need = |want: SignerRole, what: &str| {
        if role == want {
            Ok(())
        } else {
            Err(format!(
                "{what} must be signed by a {} key; {} is a {}",
                want.as_str(),
                signer.id,
                role.as_str()
            ))
        }
    };
    match payload {
        Payload::DeviceRegistered(_)
        | Payload::DeviceRevoked { .. }
        | Payload::DeviceKeyRotated { .. } => need(SignerRole::Operator, "a registry event"),
        Payload::Operator(_) => need(SignerRole::Operator, "a model, pool or transfer event"),
        Payload::Regulator(_) => need(SignerRole::Regulator, "an authorisation"),
        Payload::Table { table_id, .. } => {
            need(SignerRole::Table, "a table-game event")?;
            if !signer.table_ids.is_empty() && !signer.table_ids.iter().any(|t| t == table_id) {
                return Err(format!(
                    "device {} is not registered for table {table_id}",
                    signer.id
                ));
            }
            Ok(())
        }
        // A pool's captive value may come from the operator too (a controller's or a table's).
        Payload::Machine {
            event: v1::event_body::Payload::CaptiveValueReported(_),
            ..
        } if role == SignerRole::Operator => Ok(()),
        Payload::Machine { machine_id, .. } => {
            need(SignerRole::Machine, "a slot-machine event")?;
            if !machine_id.is_empty() && machine_id != &signer.machine_id {
                return Err(format!(
                    "device {} reports for machine {} but the event names machine {machine_id}",
                    signer.id, signer.machine_id
                ));
            }
            Ok(())
        }
    }
}

/// Who belongs to a pool: its members from the latest `PoolConfigured` of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolMembers {
    pub machine_ids: Vec<String>,
    pub table_ids: Vec<String>,
}

impl PoolMembers {
    pub fn of(p: &v1::PoolConfigured) -> PoolMembers {
        PoolMembers {
            machine_ids: p.member_machine_ids.clone(),
            table_ids: p.member_table_ids.clone(),
        }
    }
}

/// The pool a payload configures (an operator's `PoolConfigured`), if it is one.
pub fn pool_configured(payload: &Payload) -> Option<&v1::PoolConfigured> {
    match payload {
        Payload::Operator(v1::event_body::Payload::PoolConfigured(p)) => Some(p),
        _ => None,
    }
}

/// The pool a device's payload speaks for: a machine's captive value or contribution, which only
/// a member may report, or the jackpot pool a table's configuration feeds. An award or a fault naming a pool the machine does not feed is a thing that
/// happened on the floor: it is recorded, and the audit makes it a finding (refusing it would
/// lose the evidence).
pub fn pools_named(payload: &Payload) -> Vec<&str> {
    use v1::event_body::Payload as P;
    match payload {
        Payload::Machine { event, .. } => match event {
            P::CaptiveValueReported(m) => vec![m.pool_id.as_str()],
            P::JackpotContribution(m) => vec![m.pool_id.as_str()],
            _ => Vec::new(),
        },
        // The table jackpot its configuration feeds (its rounds' jackpot chips and prizes).
        Payload::Table {
            event: P::TableConfigured(c),
            ..
        } => c
            .jackpot
            .iter()
            .filter(|j| !j.pool_id.is_empty())
            .map(|j| j.pool_id.as_str())
            .collect(),
        _ => Vec::new(),
    }
}

/// A machine speaks only for the pools it is a member of (by its machine id, as registered),
/// a table device configures its table only with a jackpot pool that lists the table: each pool
/// its payload names must be configured and list the machine (`member_machine_ids`) or the
/// table (`member_table_ids`). Operators (who may report captive values) and other payloads
/// pass.
pub fn check_pool_authority<'a>(
    signer: &Signer,
    payload: &Payload,
    members: impl Fn(&str) -> Option<&'a PoolMembers>,
) -> Result<(), String> {
    let (member, table) = match (signer.role, payload) {
        (SignerRole::Machine, _) if signer.machine_id.is_empty() => (signer.id.as_str(), false),
        (SignerRole::Machine, _) => (signer.machine_id.as_str(), false),
        (SignerRole::Table, Payload::Table { table_id, .. }) => (table_id.as_str(), true),
        _ => return Ok(()),
    };
    for pool in pools_named(payload) {
        let m = members(pool).ok_or_else(|| format!("pool {pool} is not configured"))?;
        let (listed, what) = if table {
            (&m.table_ids, "table")
        } else {
            (&m.machine_ids, "machine")
        };
        if !listed.iter().any(|x| x == member) {
            return Err(format!(
                "{what} {member} (device {}) is not a member of pool {pool}",
                signer.id
            ));
        }
    }
    Ok(())
}

/// Can `reg` be registered, given the signer already known under its id (if any)?
pub fn check_registration(
    existing: Option<&Signer>,
    reg: &DeviceRegistration,
) -> Result<(), String> {
    match existing {
        None => Ok(()),
        Some(s) if s.role.is_principal() => Err(format!(
            "{} is the id of a configured {}",
            reg.device_id,
            s.role.as_str()
        )),
        Some(s) if s.revoked_at_index.is_some() => Err(format!(
            "device {} was revoked at entry {}; device ids are never reused",
            reg.device_id,
            s.revoked_at_index.unwrap_or_default()
        )),
        Some(s) => Err(format!(
            "device {} is already registered (entry {})",
            reg.device_id, s.registered_at_index
        )),
    }
}

/// Can the device `device_id` be revoked, given what is known under that id?
pub fn check_revocation(existing: Option<&Signer>, device_id: &str) -> Result<(), String> {
    match existing {
        None => Err(format!("device {device_id} is not registered")),
        Some(s) if s.role.is_principal() => Err(format!(
            "{device_id} is a configured {}; change the configuration instead",
            s.role.as_str()
        )),
        Some(s) if s.revoked_at_index.is_some() => {
            Err(format!("device {device_id} is already revoked"))
        }
        Some(_) => Ok(()),
    }
}

/// Can the key of device `device_id` be replaced by `new_key`, given what is known under that id?
/// Only a registered device's that is not revoked, and only by another key.
pub fn check_key_rotation(
    existing: Option<&Signer>,
    device_id: &str,
    new_key: &VerifyingKey,
) -> Result<(), String> {
    match existing {
        None => Err(format!("device {device_id} is not registered")),
        Some(s) if s.role.is_principal() => Err(format!(
            "{device_id} is a configured {}; change its key in the configuration instead",
            s.role.as_str()
        )),
        Some(s) if s.revoked_at_index.is_some() => Err(format!(
            "device {device_id} was revoked at entry {}; a revoked device's key is not rotated",
            s.revoked_at_index.unwrap_or_default()
        )),
        Some(s) if s.key == *new_key => Err(format!("device {device_id} already has this key")),
        Some(_) => Ok(()),
    }
}

/// Convert a declared principal.
pub fn principal_from_proto(p: &v1::Principal, index: u64) -> Result<Signer, String> {
    let role = match v1::PrincipalRole::try_from(p.role) {
        Ok(v1::PrincipalRole::Operator) => SignerRole::Operator,
        Ok(v1::PrincipalRole::Regulator) => SignerRole::Regulator,
        _ => return Err(format!("principal {}: unknown role {}", p.id, p.role)),
    };
    crate::event::id("principal id", &p.id).map_err(|e| e.to_string())?;
    let key = parse_public_key(&p.public_key).map_err(|e| format!("principal {}: {e}", p.id))?;
    Ok(Signer::principal(&p.id, role, key, index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;

    const ROLES: [SignerRole; 4] = [
        SignerRole::Table,
        SignerRole::Machine,
        SignerRole::Operator,
        SignerRole::Regulator,
    ];

    fn key(seed: u8) -> VerifyingKey {
        SigningKey::from_bytes(&[seed; 32]).verifying_key()
    }

    fn signer(id: &str, role: SignerRole) -> Signer {
        let mut s = Signer::principal(id, role, key(3), 7);
        s.table_ids = vec!["t1".into(), "t2".into()];
        s.machine_id = "M-1".into();
        s
    }

    fn payloads() -> Vec<(&'static str, Payload, SignerRole)> {
        use ledger_proto::v1::event_body::Payload as P;
        let registration = DeviceRegistration {
            device_id: "table-9".into(),
            public_key: key(9),
            kind: DeviceKind::Table,
            casino_id: "lisboa".into(),
            table_ids: vec![],
            machine_id: String::new(),
            model_id: String::new(),
            bet_values_cents: vec![],
            description: String::new(),
        };
        let table = |table_id: &str| Payload::Table {
            table_id: table_id.into(),
            event: P::BetsClosed(Default::default()),
        };
        let machine = |machine_id: &str| Payload::Machine {
            machine_id: machine_id.into(),
            event: P::GamePlayed(Default::default()),
        };
        vec![
            (
                "registration",
                Payload::DeviceRegistered(registration),
                SignerRole::Operator,
            ),
            (
                "revocation",
                Payload::DeviceRevoked {
                    device_id: "table-9".into(),
                    reason: String::new(),
                },
                SignerRole::Operator,
            ),
            (
                "key rotation",
                Payload::DeviceKeyRotated {
                    device_id: "table-9".into(),
                    public_key: key(10),
                    reason: String::new(),
                },
                SignerRole::Operator,
            ),
            (
                "operator",
                Payload::Operator(P::PoolConfigured(Default::default())),
                SignerRole::Operator,
            ),
            (
                "regulator",
                Payload::Regulator(P::TransferAuthorized(Default::default())),
                SignerRole::Regulator,
            ),
            ("table t1", table("t1"), SignerRole::Table),
            ("table t2", table("t2"), SignerRole::Table),
            ("machine M-1", machine("M-1"), SignerRole::Machine),
            (
                "captive value (no machine)",
                machine(""),
                SignerRole::Machine,
            ),
        ]
    }

    /// Who may sign what: each payload by its one role, and no other role.
    #[test]
    fn each_payload_is_signed_by_its_role_only() {
        for (what, payload, role) in payloads() {
            for r in ROLES {
                let s = signer("s-1", r);
                let verdict = authorize(&s, &payload);
                if r == role {
                    assert_eq!(verdict, Ok(()), "{what} by a {}", r.as_str());
                } else {
                    let e = verdict.expect_err(what);
                    assert!(
                        e.contains(&format!(
                            "must be signed by a {} key; s-1 is a {}",
                            role.as_str(),
                            r.as_str()
                        )),
                        "{what} by a {}: {e}",
                        r.as_str()
                    );
                }
            }
        }
    }

    /// A table device signs for its own tables only (all of them when it lists none); a machine's
    /// agent for its own machine only (or for no machine at all).
    #[test]
    fn devices_sign_for_their_own_tables_and_machine() {
        use ledger_proto::v1::event_body::Payload as P;
        let table = |table_id: &str| Payload::Table {
            table_id: table_id.into(),
            event: P::BetsClosed(Default::default()),
        };
        let t = signer("table-1", SignerRole::Table);
        assert_eq!(
            authorize(&t, &table("t3")),
            Err("device table-1 is not registered for table t3".into())
        );
        let mut any = t.clone();
        any.table_ids.clear();
        assert_eq!(authorize(&any, &table("t3")), Ok(()));

        let machine = |machine_id: &str| Payload::Machine {
            machine_id: machine_id.into(),
            event: P::GamePlayed(Default::default()),
        };
        let m = signer("agent-1", SignerRole::Machine);
        assert_eq!(
            authorize(&m, &machine("M-2")),
            Err("device agent-1 reports for machine M-1 but the event names machine M-2".into())
        );
    }

    #[test]
    fn roles_are_read_by_their_names_and_principals_are_operators_and_regulators() {
        for r in ROLES {
            assert_eq!(SignerRole::parse(r.as_str()), Some(r));
        }
        let names: Vec<&str> = ROLES.iter().map(|r| r.as_str()).collect();
        assert_eq!(names, ["table", "machine", "operator", "regulator"]);
        assert_eq!(SignerRole::parse("Table"), None);
        assert_eq!(SignerRole::parse(""), None);
        let principals: Vec<bool> = ROLES.iter().map(|r| r.is_principal()).collect();
        assert_eq!(principals, [false, false, true, true]);
    }

    /// A signer survives its stored form (`DeviceInfo`), revoked or not.
    #[test]
    fn signers_round_trip_through_their_stored_form() {
        let mut s = signer("table-1", SignerRole::Table);
        s.casino_id = "lisboa".into();
        s.model_id = "K".into();
        s.bet_values_cents = vec![10, 20];
        s.description = "mesa 1".into();
        s.last_sequence = 41;
        s.last_index = 99;
        let p = s.to_proto();
        assert_eq!(p.kind, "table");
        assert!(!p.revoked);
        assert_eq!(Signer::from_proto(&p), Ok(s.clone()));
        s.revoked_at_index = Some(120);
        let p = s.to_proto();
        assert!(p.revoked);
        assert_eq!(p.revoked_at_index, 120);
        assert_eq!(Signer::from_proto(&p), Ok(s));
    }

    /// A key is rotated for a registered, unrevoked device only, and to another key.
    #[test]
    fn key_rotations_by_what_the_id_already_is() {
        let device = signer("x", SignerRole::Table);
        let mut revoked = device.clone();
        revoked.revoked_at_index = Some(12);
        let operator = signer("x", SignerRole::Operator);
        assert_eq!(check_key_rotation(Some(&device), "x", &key(9)), Ok(()));
        assert_eq!(
            check_key_rotation(None, "x", &key(9)),
            Err("device x is not registered".into())
        );
        assert_eq!(
            check_key_rotation(Some(&operator), "x", &key(9)),
            Err("x is a configured operator; change its key in the configuration instead".into())
        );
        assert_eq!(
            check_key_rotation(Some(&revoked), "x", &key(9)),
            Err("device x was revoked at entry 12; a revoked device's key is not rotated".into())
        );
        assert_eq!(
            check_key_rotation(Some(&device), "x", &device.key),
            Err("device x already has this key".into())
        );
    }

    /// Ids are never reused: not a principal's, not a revoked device's, not a registered one's.
    #[test]
    fn registrations_and_revocations_by_what_the_id_already_is() {
        let reg = DeviceRegistration {
            device_id: "x".into(),
            public_key: key(9),
            kind: DeviceKind::Table,
            casino_id: "lisboa".into(),
            table_ids: vec![],
            machine_id: String::new(),
            model_id: String::new(),
            bet_values_cents: vec![],
            description: String::new(),
        };
        let device = signer("x", SignerRole::Table);
        let mut revoked = device.clone();
        revoked.revoked_at_index = Some(12);
        let operator = signer("x", SignerRole::Operator);
        assert_eq!(check_registration(None, &reg), Ok(()));
        assert_eq!(
            check_registration(Some(&operator), &reg),
            Err("x is the id of a configured operator".into())
        );
        assert_eq!(
            check_registration(Some(&revoked), &reg),
            Err("device x was revoked at entry 12; device ids are never reused".into())
        );
        assert_eq!(
            check_registration(Some(&device), &reg),
            Err("device x is already registered (entry 7)".into())
        );
        assert_eq!(check_revocation(Some(&device), "x"), Ok(()));
        assert_eq!(
            check_revocation(None, "x"),
            Err("device x is not registered".into())
        );
        assert_eq!(
            check_revocation(Some(&operator), "x"),
            Err("x is a configured operator; change the configuration instead".into())
        );
        assert_eq!(
            check_revocation(Some(&revoked), "x"),
            Err("device x is already revoked".into())
        );
    }
}
