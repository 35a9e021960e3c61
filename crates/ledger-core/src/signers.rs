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
        Payload::DeviceRegistered(_) | Payload::DeviceRevoked { .. } => {
            need(SignerRole::Operator, "a registry event")
        }
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
