//! The ledger's signer: the one thing that signs ledger records and checkpoints. Either an
//! ed25519 key read from a file ([`crate::keyfile`]), or a key that never leaves a PKCS#11 token
//! (an HSM; tested with SoftHSM2), used through the `cryptoki` crate.
//!
//! The ledger signs only its own records and checkpoints (not each event), so one PKCS#11
//! session behind a mutex is enough: a signature through SoftHSM2 costs tens of microseconds.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::mechanism::Mechanism;
use cryptoki::mechanism::eddsa::{EddsaParams, EddsaSignatureScheme};
use cryptoki::object::{Attribute, AttributeType, KeyType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::slot::Slot;
use cryptoki::types::AuthPin;
use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use ledger_core::signing::LedgerSigner;

use crate::StoreError;

/// DER of the Ed25519 curve's object identifier (1.3.101.112), the `CKA_EC_PARAMS` of its keys.
const ED25519_OID_DER: [u8; 5] = [0x06, 0x03, 0x2B, 0x65, 0x70];

/// Where the ledger's key is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// `ledger.key` in the data directory (created for a new ledger).
    DataDir,
    /// A key file outside the data directory (created for a new ledger).
    File(PathBuf),
    /// A key pair in a PKCS#11 token; never created by ledgerd (see [`Pkcs11Signer::generate`]).
    Pkcs11(Pkcs11Config),
}

/// A key pair in a PKCS#11 token: the module (shared library), the token's label, the label of
/// the key pair (`CKA_LABEL` of both halves) and the user PIN.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkcs11Config {
    pub module: PathBuf,
    pub token_label: String,
    pub key_label: String,
    pub pin: String,
}

impl std::fmt::Debug for Pkcs11Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkcs11Config")
            .field("module", &self.module)
            .field("token_label", &self.token_label)
            .field("key_label", &self.key_label)
            .field("pin", &"<hidden>")
            .finish()
    }
}

/// The ledger's signer.
pub enum LedgerKey {
    /// A key in memory (from a key file).
    Memory(SigningKey),
    /// A key in a PKCS#11 token.
    Pkcs11(Pkcs11Signer),
}

impl std::fmt::Debug for LedgerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LedgerKey::Memory(k) => write!(
                f,
                "LedgerKey::Memory({})",
                hex::encode(k.verifying_key().as_bytes())
            ),
            LedgerKey::Pkcs11(p) => write!(f, "LedgerKey::Pkcs11({})", p.describe()),
        }
    }
}

impl LedgerSigner for LedgerKey {
    type Error = StoreError;
    fn public_key(&self) -> VerifyingKey {
        match self {
            LedgerKey::Memory(k) => k.verifying_key(),
            LedgerKey::Pkcs11(p) => p.public,
        }
    }
    fn sign_message(&self, message: &[u8]) -> Result<Signature, StoreError> {
        match self {
            LedgerKey::Memory(k) => Ok(ed25519_dalek::Signer::sign(k, message)),
            LedgerKey::Pkcs11(p) => p.sign(message),
        }
    }
}

/// An Ed25519 key pair in a PKCS#11 token, with a logged-in session.
pub struct Pkcs11Signer {
    // Dropped in this order: the session (logs out and closes), then the module.
    session: Mutex<Session>,
    private: ObjectHandle,
    public: VerifyingKey,
    config: Pkcs11Config,
    _module: Pkcs11,
}

fn hsm(cfg: &Pkcs11Config, what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Key(format!(
        "PKCS#11 {} (token {:?}, key {:?}): {what}: {e}",
        cfg.module.display(),
        cfg.token_label,
        cfg.key_label
    ))
}

/// Load the module and find the slot holding the token labelled `cfg.token_label`.
fn module_and_slot(cfg: &Pkcs11Config) -> Result<(Pkcs11, Slot), StoreError> {
    let module = Pkcs11::new(&cfg.module).map_err(|e| hsm(cfg, "cannot load the module", e))?;
    module
        .initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK))
        .map_err(|e| hsm(cfg, "C_Initialize", e))?;
    let slots = module
        .get_slots_with_initialized_token()
        .map_err(|e| hsm(cfg, "C_GetSlotList", e))?;
    let mut labels = Vec::new();
    for slot in slots {
        let info = module
            .get_token_info(slot)
            .map_err(|e| hsm(cfg, "C_GetTokenInfo", e))?;
        let label = info.label().trim_end().to_string();
        if label == cfg.token_label {
            return Ok((module, slot));
        }
        labels.push(label);
    }
    Err(hsm(
        cfg,
        "no such token",
        format!("the module has tokens {labels:?}"),
    ))
}

fn login(module: &Pkcs11, slot: Slot, cfg: &Pkcs11Config, rw: bool) -> Result<Session, StoreError> {
    let session = if rw {
        module.open_rw_session(slot)
    } else {
        module.open_ro_session(slot)
    }
    .map_err(|e| hsm(cfg, "C_OpenSession", e))?;
    session
        .login(UserType::User, Some(&AuthPin::from(cfg.pin.clone())))
        .map_err(|e| hsm(cfg, "C_Login (the user PIN)", e))?;
    Ok(session)
}

fn find_one(
    session: &Session,
    cfg: &Pkcs11Config,
    class: ObjectClass,
) -> Result<Option<ObjectHandle>, StoreError> {
    let found = session
        .find_objects(&[
            Attribute::Class(class),
            Attribute::KeyType(KeyType::EC_EDWARDS),
            Attribute::Label(cfg.key_label.as_bytes().to_vec()),
        ])
        .map_err(|e| hsm(cfg, "C_FindObjects", e))?;
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        more => Err(hsm(
            cfg,
            "ambiguous key label",
            format!("{} objects of class {class} carry it", more.len()),
        )),
    }
}

/// The 32-byte public key from `CKA_EC_POINT`: a DER OCTET STRING (as PKCS#11 3.0 and SoftHSM2
/// write it) or the raw 32 bytes (as some tokens do).
fn public_from_ec_point(point: &[u8]) -> Result<VerifyingKey, String> {
    let raw = match point {
        [0x04, 0x20, rest @ ..] if rest.len() == 32 => rest,
        raw if raw.len() == 32 => raw,
        other => {
            return Err(format!(
                "CKA_EC_POINT of {} bytes is not an Ed25519 point",
                other.len()
            ));
        }
    };
    ledger_core::signing::parse_public_key(raw).map_err(|e| e.to_string())
}

fn public_key_of(
    session: &Session,
    cfg: &Pkcs11Config,
    handle: ObjectHandle,
) -> Result<VerifyingKey, StoreError> {
    let attrs = session
        .get_attributes(handle, &[AttributeType::EcPoint])
        .map_err(|e| hsm(cfg, "C_GetAttributeValue(CKA_EC_POINT)", e))?;
    let point = attrs
        .iter()
        .find_map(|a| match a {
            Attribute::EcPoint(p) => Some(p.clone()),
            _ => None,
        })
        .ok_or_else(|| hsm(cfg, "the public key", "has no CKA_EC_POINT"))?;
    public_from_ec_point(&point).map_err(|e| hsm(cfg, "the public key", e))
}

fn eddsa() -> Mechanism<'static> {
    Mechanism::Eddsa(EddsaParams::new(EddsaSignatureScheme::Pure))
}

impl Pkcs11Signer {
    /// Open the token, log in, find the key pair labelled `cfg.key_label`, and check with one
    /// signature that its two halves belong together.
    pub fn open(cfg: &Pkcs11Config) -> Result<Pkcs11Signer, StoreError> {
        let (module, slot) = module_and_slot(cfg)?;
        let session = login(&module, slot, cfg, false)?;
        let private = find_one(&session, cfg, ObjectClass::PRIVATE_KEY)?.ok_or_else(|| {
            hsm(
                cfg,
                "no Ed25519 private key with this label",
                "create it with `ledgerctl hsm keygen`",
            )
        })?;
        let public_handle = find_one(&session, cfg, ObjectClass::PUBLIC_KEY)?.ok_or_else(|| {
            hsm(
                cfg,
                "no Ed25519 public key with this label",
                "the token holds only the private half",
            )
        })?;
        let public = public_key_of(&session, cfg, public_handle)?;
        let signer = Pkcs11Signer {
            session: Mutex::new(session),
            private,
            public,
            config: cfg.clone(),
            _module: module,
        };
        let probe = b"casino-ledger: PKCS#11 key check";
        let sig = signer.sign(probe)?;
        public
            .verify_strict(probe, &sig)
            .map_err(|_| hsm(cfg, "key check", "a signature of the private key does not verify with the public key of the same label"))?;
        Ok(signer)
    }

    /// Create an Ed25519 key pair labelled `cfg.key_label` in the token (private, sensitive,
    /// never extractable); refuses when a key with this label exists. Returns its public key.
    pub fn generate(cfg: &Pkcs11Config) -> Result<VerifyingKey, StoreError> {
        let (module, slot) = module_and_slot(cfg)?;
        let session = login(&module, slot, cfg, true)?;
        for class in [ObjectClass::PRIVATE_KEY, ObjectClass::PUBLIC_KEY] {
            if find_one(&session, cfg, class)?.is_some() {
                return Err(hsm(
                    cfg,
                    "refused",
                    "the token already holds a key with this label",
                ));
            }
        }
        let label = Attribute::Label(cfg.key_label.as_bytes().to_vec());
        let public_template = [
            Attribute::Token(true),
            Attribute::Private(false),
            Attribute::Verify(true),
            Attribute::EcParams(ED25519_OID_DER.to_vec()),
            label.clone(),
        ];
        let private_template = [
            Attribute::Token(true),
            Attribute::Private(true),
            Attribute::Sensitive(true),
            Attribute::Extractable(false),
            Attribute::Sign(true),
            label,
        ];
        let (public, _) = session
            .generate_key_pair(
                &Mechanism::EccEdwardsKeyPairGen,
                &public_template,
                &private_template,
            )
            .map_err(|e| hsm(cfg, "C_GenerateKeyPair (CKM_EC_EDWARDS_KEY_PAIR_GEN)", e))?;
        public_key_of(&session, cfg, public)
    }

    /// The public key of the key pair labelled `cfg.key_label`.
    pub fn public_key(cfg: &Pkcs11Config) -> Result<VerifyingKey, StoreError> {
        Ok(Pkcs11Signer::open(cfg)?.public)
    }

    /// Sign `message` with CKM_EDDSA (pure Ed25519).
    pub fn sign(&self, message: &[u8]) -> Result<Signature, StoreError> {
        let session = self.session.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = session
            .sign(&eddsa(), self.private, message)
            .map_err(|e| hsm(&self.config, "C_Sign (CKM_EDDSA)", e))?;
        Signature::from_slice(&bytes)
            .map_err(|e| hsm(&self.config, "C_Sign returned no Ed25519 signature", e))
    }

    fn describe(&self) -> String {
        format!(
            "module {}, token {:?}, key {:?}, public {}",
            self.config.module.display(),
            self.config.token_label,
            self.config.key_label,
            hex::encode(self.public.as_bytes())
        )
    }
}

/// Read a PIN file: its first line, which must not be empty; refused when the group or others
/// may read it.
pub fn read_pin_file(path: &Path) -> Result<String, StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let meta =
        std::fs::metadata(path).map_err(|e| StoreError::Key(format!("{}: {e}", path.display())))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(StoreError::Key(format!(
            "{} is accessible by group or others (mode {:o}); run chmod 600 on it",
            path.display(),
            meta.permissions().mode() & 0o777
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| StoreError::Key(format!("{}: {e}", path.display())))?;
    let pin = text.lines().next().unwrap_or("").trim().to_string();
    if pin.is_empty() {
        return Err(StoreError::Key(format!("{} holds no PIN", path.display())));
    }
    Ok(pin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ec_points_are_read_in_both_encodings_and_refused_otherwise() {
        let k = SigningKey::from_bytes(&[5; 32]).verifying_key();
        let mut der = vec![0x04, 0x20];
        der.extend_from_slice(k.as_bytes());
        assert_eq!(public_from_ec_point(&der), Ok(k));
        assert_eq!(public_from_ec_point(k.as_bytes()), Ok(k));
        assert!(
            public_from_ec_point(&der[..33])
                .unwrap_err()
                .contains("33 bytes")
        );
        // The identity point is a weak key: refused like any weak key the ledger would trust.
        let mut weak = [0u8; 32];
        weak[0] = 1;
        assert!(public_from_ec_point(&weak).is_err());
    }

    #[test]
    fn pin_files_must_be_private_and_not_empty() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pin");
        std::fs::write(&p, "1234\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(
            read_pin_file(&p)
                .unwrap_err()
                .to_string()
                .contains("chmod 600")
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_pin_file(&p).unwrap(), "1234");
        std::fs::write(&p, "\n").unwrap();
        assert!(
            read_pin_file(&p)
                .unwrap_err()
                .to_string()
                .contains("holds no PIN")
        );
    }
}
