//! C2SP signed notes (<https://c2sp.org/signed-note>) and the checkpoint text they carry
//! (<https://c2sp.org/tlog-checkpoint>), with ed25519 signatures (signature type 0x01).
//!
//! A ledger's checkpoint note:
//!
//! ```text
//! casino-ledger/<ledger id>          origin: the log's name, also the ledger key's name
//! <tree size>                        entries 0..size (a checkpoint of entry i has size i + 1)
//! <base64 root>                      the RFC 6962 root (crate::merkle)
//! blake3-chain-head <64 hex digits>  extension: entry size-1's blake3 chain hash
//!
//! — casino-ledger/<ledger id> <base64(key id ‖ ed25519 signature over the text above)>
//! ```
//!
//! The key id is the first 4 bytes of `SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key)`. The text is
//! signed as it is, without the domain prefix of the ledger's other signatures: those begin with
//! `casino-ledger/v1/…\n\0`, and no note text holds a NUL byte, so no signature can stand for both.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

use crate::Hash32;
use crate::merkle::TreeHash;

/// The origin (and key name) of a ledger's checkpoints.
pub fn origin_of(ledger_id: &str) -> String {
    format!("casino-ledger/{ledger_id}")
}

/// The extension line's keyword for the blake3 chain head.
const CHAIN_HEAD: &str = "blake3-chain-head";

/// Most signature lines a note may carry (cosignatures of witnesses included).
pub const MAX_SIGNATURES: usize = 100;

/// The em dash that begins a signature line.
const DASH: &str = "\u{2014} ";

/// Signature type of an ed25519 note signature.
const ED25519_TYPE: u8 = 0x01;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NoteError {
    #[error("malformed note: {0}")]
    Malformed(String),
    #[error("malformed checkpoint: {0}")]
    Checkpoint(String),
    #[error("no signature by {0} on the note")]
    Unsigned(String),
    #[error("bad signature by {0} on the note")]
    BadSignature(String),
}

/// The body of a checkpoint note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointText {
    pub origin: String,
    pub size: u64,
    pub root: TreeHash,
    /// The blake3 chain hash of entry `size - 1`, if the note carries it.
    pub chain_head: Option<Hash32>,
}

impl CheckpointText {
    /// The note text, each line ending in a newline.
    pub fn text(&self) -> String {
        let mut t = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.root)
        );
        if let Some(h) = &self.chain_head {
            t.push_str(&format!("{CHAIN_HEAD} {}\n", hex::encode(h)));
        }
        t
    }

    /// Parse a note's text (as [`SignedNote::text`] gives it). Extension lines other than the
    /// chain head are refused: a ledger writes none.
    pub fn parse(text: &str) -> Result<CheckpointText, NoteError> {
        let bad = |what: &str| NoteError::Checkpoint(what.to_string());
        let (origin, size, root, lines) = checkpoint_head(text)?;
        let mut chain_head = None;
        for line in lines {
            let Some(hex_head) = line
                .strip_prefix(CHAIN_HEAD)
                .and_then(|r| r.strip_prefix(' '))
            else {
                return Err(bad(&format!("unknown extension line {line:?}")));
            };
            if chain_head.is_some() {
                return Err(bad("two chain head lines"));
            }
            let h: Hash32 = hex::decode(hex_head)
                .ok()
                .filter(|_| hex_head.bytes().all(|b| !b.is_ascii_uppercase()))
                .and_then(|v| v.try_into().ok())
                .ok_or_else(|| bad("the chain head must be 64 lowercase hex digits"))?;
            chain_head = Some(h);
        }
        Ok(CheckpointText {
            origin: origin.to_string(),
            size,
            root,
            chain_head,
        })
    }
}

/// The first three lines of a checkpoint text (origin, tree size, root hash) and the extension
/// lines after them, with the C2SP tlog-checkpoint rules.
fn checkpoint_head(
    text: &str,
) -> Result<(&str, u64, TreeHash, std::str::Split<'_, char>), NoteError> {
    let bad = |what: &str| NoteError::Checkpoint(what.to_string());
    let body = text
        .strip_suffix('\n')
        .ok_or_else(|| bad("the text must end with a newline"))?;
    let mut lines = body.split('\n');
    let origin = lines.next().unwrap_or_default();
    if origin.is_empty() {
        return Err(bad("empty origin line"));
    }
    let size_line = lines.next().ok_or_else(|| bad("no tree size line"))?;
    if size_line.is_empty()
        || !size_line.bytes().all(|b| b.is_ascii_digit())
        || (size_line.len() > 1 && size_line.starts_with('0'))
    {
        return Err(bad(
            "the tree size must be a decimal number without leading zeros",
        ));
    }
    let size: u64 = size_line
        .parse()
        .map_err(|_| bad("the tree size does not fit 64 bits"))?;
    let root_line = lines.next().ok_or_else(|| bad("no root hash line"))?;
    let root: TreeHash = B64
        .decode(root_line)
        .ok()
        .and_then(|v| v.try_into().ok())
        .ok_or_else(|| bad("the root hash must be 32 bytes in base64"))?;
    if B64.encode(root) != root_line {
        return Err(bad("the root hash is not in canonical base64"));
    }
    Ok((origin, size, root, lines))
}

/// The key id of an ed25519 note key: `SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key)[..4]`.
pub fn key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([ED25519_TYPE]);
    h.update(key.as_bytes());
    let d = h.finalize();
    [d[0], d[1], d[2], d[3]]
}

/// The vkey string of a note key (`<name>+<hex key id>+<base64(0x01 ‖ key)>`), as note
/// verifiers (Go's `note.NewVerifier`, and others) take it.
pub fn verifier_key(name: &str, key: &VerifyingKey) -> String {
    let mut k = vec![ED25519_TYPE];
    k.extend_from_slice(key.as_bytes());
    format!(
        "{name}+{}+{}",
        hex::encode(key_id(name, key)),
        B64.encode(k)
    )
}

/// One signature line of a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteSignature {
    pub name: String,
    pub key_id: [u8; 4],
    /// The signature bytes after the key id (64 for ed25519; a cosignature's are longer).
    pub signature: Vec<u8>,
}

impl NoteSignature {
    /// The signature line: `— <name> <base64(key id ‖ signature)>` and a newline.
    pub fn to_line(&self) -> String {
        let mut b = self.key_id.to_vec();
        b.extend_from_slice(&self.signature);
        format!("{DASH}{} {}\n", self.name, B64.encode(b))
    }
}

/// A signed note: its text and its signature lines, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedNote {
    pub text: String,
    pub signatures: Vec<NoteSignature>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == '+')
}

impl SignedNote {
    /// Sign `text` (which must end with a newline) as `name` with an ed25519 key.
    pub fn sign(text: &str, name: &str, key: &SigningKey) -> Result<SignedNote, NoteError> {
        SignedNote::sign_with(text, name, key)
    }

    /// [`SignedNote::sign`] with any ledger signer (a key in a hardware module may fail).
    pub fn sign_with<S: crate::signing::LedgerSigner + ?Sized>(
        text: &str,
        name: &str,
        key: &S,
    ) -> Result<SignedNote, NoteError> {
        check_text(text)?;
        if !valid_name(name) {
            return Err(NoteError::Malformed(format!("bad key name {name:?}")));
        }
        let sig = key
            .sign_message(text.as_bytes())
            .map_err(|e| NoteError::Malformed(format!("the signer failed: {e}")))?;
        Ok(SignedNote {
            text: text.to_string(),
            signatures: vec![NoteSignature {
                name: name.to_string(),
                key_id: key_id(name, &key.public_key()),
                signature: sig.to_bytes().to_vec(),
            }],
        })
    }

    /// The note as its text format: the text, a blank line, the signature lines.
    pub fn encode(&self) -> String {
        let mut s = self.text.clone();
        s.push('\n');
        for sig in &self.signatures {
            s.push_str(&sig.to_line());
        }
        s
    }

    /// Parse a note (the C2SP rules: UTF-8, no control characters but newlines, text ending in a
    /// newline, a blank line, at least one and at most [`MAX_SIGNATURES`] signature lines).
    pub fn parse(note: &str) -> Result<SignedNote, NoteError> {
        let bad = |what: String| NoteError::Malformed(what);
        if note.chars().any(|c| c.is_control() && c != '\n') {
            return Err(bad("control character".into()));
        }
        let split = note
            .rfind("\n\n")
            .ok_or_else(|| bad("no blank line before the signatures".into()))?;
        let (text, sigs) = (&note[..split + 1], &note[split + 2..]);
        let sigs = sigs
            .strip_suffix('\n')
            .ok_or_else(|| bad("the last signature line must end with a newline".into()))?;
        let mut signatures = Vec::new();
        for line in sigs.split('\n') {
            let rest = line.strip_prefix(DASH).ok_or_else(|| {
                bad(format!(
                    "signature line {line:?} does not begin with an em dash"
                ))
            })?;
            let (name, b64) = rest
                .split_once(' ')
                .ok_or_else(|| bad(format!("signature line {line:?} has no signature")))?;
            if !valid_name(name) {
                return Err(bad(format!("bad key name {name:?}")));
            }
            let raw = B64
                .decode(b64)
                .map_err(|_| bad(format!("signature of {name} is not base64")))?;
            if raw.len() < 5 {
                return Err(bad(format!("signature of {name} is too short")));
            }
            signatures.push(NoteSignature {
                name: name.to_string(),
                key_id: [raw[0], raw[1], raw[2], raw[3]],
                signature: raw[4..].to_vec(),
            });
            if signatures.len() > MAX_SIGNATURES {
                return Err(bad(format!("more than {MAX_SIGNATURES} signatures")));
            }
        }
        check_text(text)?;
        Ok(SignedNote {
            text: text.to_string(),
            signatures,
        })
    }

    /// Check the ed25519 signature of `name` with `key` (the line with that name and key id).
    pub fn verify(&self, name: &str, key: &VerifyingKey) -> Result<(), NoteError> {
        let id = key_id(name, key);
        let sig = self
            .signatures
            .iter()
            .find(|s| s.name == name && s.key_id == id)
            .ok_or_else(|| NoteError::Unsigned(name.to_string()))?;
        let sig = ed25519_dalek::Signature::from_slice(&sig.signature)
            .map_err(|_| NoteError::BadSignature(name.to_string()))?;
        key.verify_strict(self.text.as_bytes(), &sig)
            .map_err(|_| NoteError::BadSignature(name.to_string()))
    }
}

/// Signature type of an ed25519 cosignature (c2sp.org/tlog-cosignature, `cosignature/v1`).
const COSIGNATURE_TYPE: u8 = 0x04;

/// Signature type of an ML-DSA-44 cosignature (c2sp.org/tlog-cosignature, `subtree/v1`).
const ML_DSA_44_TYPE: u8 = 0x06;

/// Bytes of an ML-DSA-44 public key (FIPS 204 `pkEncode`).
pub const ML_DSA_44_PUBLIC_KEY_LEN: usize = 1312;

/// Bytes of an ML-DSA-44 signature (FIPS 204 `sigEncode`).
pub const ML_DSA_44_SIGNATURE_LEN: usize = 2420;

/// An ML-DSA-44 public key.
pub type MlDsa44Key = ml_dsa::VerifyingKey<ml_dsa::MlDsa44>;

/// An ML-DSA-44 secret key (kept as its 32-byte seed).
pub type MlDsa44Secret = ml_dsa::SigningKey<ml_dsa::MlDsa44>;

/// The ML-DSA-44 key pair of a 32-byte seed (FIPS 204 `ML-DSA.KeyGen_internal`).
pub fn ml_dsa_44_from_seed(seed: &[u8; 32]) -> MlDsa44Secret {
    MlDsa44Secret::from_seed(&ml_dsa::B32::from(*seed))
}

/// The public key of an ML-DSA-44 secret key.
pub fn ml_dsa_44_public(key: &MlDsa44Secret) -> MlDsa44Key {
    ml_dsa::signature::Keypair::verifying_key(key)
}

/// The ML-DSA-44 public key of its 1312 encoded bytes.
pub fn ml_dsa_44_key(bytes: &[u8]) -> Result<MlDsa44Key, NoteError> {
    let enc = ml_dsa::EncodedVerifyingKey::<ml_dsa::MlDsa44>::try_from(bytes).map_err(|_| {
        NoteError::Malformed(format!(
            "an ML-DSA-44 public key has {ML_DSA_44_PUBLIC_KEY_LEN} bytes, not {}",
            bytes.len()
        ))
    })?;
    Ok(MlDsa44Key::decode(&enc))
}

/// A secret ML-DSA-44 key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, the seed-only form of
/// RFC 9881: the 32-byte seed under OID 2.16.840.1.101.3.4.3.17).
pub fn ml_dsa_44_secret_pem(key: &MlDsa44Secret) -> Result<String, NoteError> {
    use pkcs8::EncodePrivateKey as _;
    key.to_pkcs8_pem(pkcs8::LineEnding::LF)
        .map(|p| p.to_string())
        .map_err(|e| NoteError::Malformed(format!("ML-DSA-44 key: {e}")))
}

/// A secret ML-DSA-44 key from PKCS#8 PEM ([`ml_dsa_44_secret_pem`]).
pub fn ml_dsa_44_secret_from_pem(pem: &str) -> Result<MlDsa44Secret, NoteError> {
    use pkcs8::DecodePrivateKey as _;
    MlDsa44Secret::from_pkcs8_pem(pem.trim())
        .map_err(|e| NoteError::Malformed(format!("not an ML-DSA-44 PKCS#8 PEM private key: {e}")))
}

/// A public ML-DSA-44 key as SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
pub fn ml_dsa_44_public_pem(key: &MlDsa44Key) -> Result<String, NoteError> {
    use pkcs8::spki::EncodePublicKey as _;
    key.to_public_key_pem(pkcs8::LineEnding::LF)
        .map_err(|e| NoteError::Malformed(format!("ML-DSA-44 key: {e}")))
}

/// A public ML-DSA-44 key from SubjectPublicKeyInfo PEM ([`ml_dsa_44_public_pem`]).
pub fn ml_dsa_44_public_from_pem(pem: &str) -> Result<MlDsa44Key, NoteError> {
    use pkcs8::spki::DecodePublicKey as _;
    MlDsa44Key::from_public_key_pem(pem.trim())
        .map_err(|e| NoteError::Malformed(format!("not an ML-DSA-44 PEM public key: {e}")))
}

/// A witness's public cosigning key, of either C2SP cosignature type. Cheap to clone.
#[derive(Clone, PartialEq)]
pub enum CosignerKey {
    /// `cosignature/v1` (type 0x04): ed25519 over the whole note text.
    Ed25519(VerifyingKey),
    /// `subtree/v1` (type 0x06): ML-DSA-44 over the cosigner's name, the time, and the
    /// checkpoint's origin, size and root (not its extension lines).
    MlDsa44(std::sync::Arc<MlDsa44Key>),
}

impl Eq for CosignerKey {}

impl std::fmt::Debug for CosignerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.public_bytes();
        write!(f, "{}({}…)", self.kind(), hex::encode(&b[..8]))
    }
}

impl From<VerifyingKey> for CosignerKey {
    fn from(k: VerifyingKey) -> CosignerKey {
        CosignerKey::Ed25519(k)
    }
}

impl From<&VerifyingKey> for CosignerKey {
    fn from(k: &VerifyingKey) -> CosignerKey {
        CosignerKey::Ed25519(*k)
    }
}

impl From<MlDsa44Key> for CosignerKey {
    fn from(k: MlDsa44Key) -> CosignerKey {
        CosignerKey::MlDsa44(std::sync::Arc::new(k))
    }
}

impl From<&CosignerKey> for CosignerKey {
    fn from(k: &CosignerKey) -> CosignerKey {
        k.clone()
    }
}

impl CosignerKey {
    /// "ed25519" or "ML-DSA-44".
    pub fn kind(&self) -> &'static str {
        match self {
            CosignerKey::Ed25519(_) => "ed25519",
            CosignerKey::MlDsa44(_) => "ML-DSA-44",
        }
    }

    fn type_byte(&self) -> u8 {
        match self {
            CosignerKey::Ed25519(_) => COSIGNATURE_TYPE,
            CosignerKey::MlDsa44(_) => ML_DSA_44_TYPE,
        }
    }

    /// The public key's bytes (32 for ed25519, 1312 for ML-DSA-44).
    pub fn public_bytes(&self) -> Vec<u8> {
        match self {
            CosignerKey::Ed25519(k) => k.as_bytes().to_vec(),
            CosignerKey::MlDsa44(k) => k.encode().to_vec(),
        }
    }

    /// The key id: `SHA-256(name ‖ "\n" ‖ type ‖ key)[..4]`.
    pub fn key_id(&self, name: &str) -> [u8; 4] {
        let mut h = Sha256::new();
        h.update(name.as_bytes());
        h.update(b"\n");
        h.update([self.type_byte()]);
        h.update(self.public_bytes());
        let d = h.finalize();
        [d[0], d[1], d[2], d[3]]
    }

    /// The vkey: `<name>+<hex key id>+<base64(type ‖ key)>`.
    pub fn vkey(&self, name: &str) -> String {
        let mut k = vec![self.type_byte()];
        k.extend_from_slice(&self.public_bytes());
        format!(
            "{name}+{}+{}",
            hex::encode(self.key_id(name)),
            B64.encode(k)
        )
    }

    /// Parse a witness's vkey of either type (0x04 ed25519, 0x06 ML-DSA-44); its key id must be
    /// the one its name and key give.
    pub fn parse_vkey(vkey: &str) -> Result<(String, CosignerKey), NoteError> {
        let bad = |w: &str| NoteError::Malformed(format!("witness key: {w}"));
        let s = vkey.trim();
        let mut parts = s.splitn(3, '+');
        let (Some(name), Some(id), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("expected NAME+KEYID+BASE64 (a vkey)"));
        };
        if !valid_name(name) {
            return Err(bad(&format!("bad key name {name:?}")));
        }
        let raw = B64
            .decode(b64)
            .map_err(|_| bad("the key is not standard base64"))?;
        let key = match raw.split_first() {
            Some((&COSIGNATURE_TYPE, k)) => CosignerKey::Ed25519(
                k.try_into()
                    .ok()
                    .and_then(|k: [u8; 32]| VerifyingKey::from_bytes(&k).ok())
                    .ok_or_else(|| bad("not a 32-byte ed25519 public key"))?,
            ),
            Some((&ML_DSA_44_TYPE, k)) => CosignerKey::from(ml_dsa_44_key(k)?),
            Some((t, _)) => {
                return Err(bad(&format!(
                    "key type 0x{t:02x}: a witness key is of type 0x04 (ed25519 cosignature/v1) or 0x06 (ML-DSA-44)"
                )));
            }
            None => return Err(bad("empty key")),
        };
        if key.key_id(name) != hex::decode(id).unwrap_or_default().as_slice() {
            return Err(bad("the key id is not the one of this name and key"));
        }
        Ok((name.to_string(), key))
    }
}

/// The key id of a witness's ed25519 cosigning key: `SHA-256(name ‖ "\n" ‖ 0x04 ‖ key)[..4]`.
pub fn cosigner_key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    CosignerKey::from(key).key_id(name)
}

/// The message a `cosignature/v1` signs: two header lines and the checkpoint's note text.
fn cosigned_message(text: &str, timestamp: u64) -> Vec<u8> {
    format!("cosignature/v1\ntime {timestamp}\n{text}").into_bytes()
}

/// The TLS-encoded `cosigned_message` an ML-DSA-44 cosignature signs (`subtree/v1`): label,
/// cosigner name, time, the log's origin, start 0, end = tree size, root. Names are 1..=255 bytes.
fn subtree_message(
    cosigner: &str,
    timestamp: u64,
    origin: &str,
    size: u64,
    root: &TreeHash,
) -> Result<Vec<u8>, NoteError> {
    let opaque8 = |what: &str, s: &str| -> Result<Vec<u8>, NoteError> {
        let len = u8::try_from(s.len())
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| NoteError::Malformed(format!("the {what} must be 1 to 255 bytes")))?;
        Ok([&[len][..], s.as_bytes()].concat())
    };
    let mut m = b"subtree/v1\n\0".to_vec();
    m.extend(opaque8("cosigner name", cosigner)?);
    m.extend_from_slice(&timestamp.to_be_bytes());
    m.extend(opaque8("log origin", origin)?);
    m.extend_from_slice(&0u64.to_be_bytes());
    m.extend_from_slice(&size.to_be_bytes());
    m.extend_from_slice(root);
    Ok(m)
}

fn check_cosigner(text: &str, name: &str, timestamp: u64) -> Result<(), NoteError> {
    check_text(text)?;
    if !valid_name(name) {
        return Err(NoteError::Malformed(format!("bad key name {name:?}")));
    }
    if timestamp > i64::MAX as u64 {
        return Err(NoteError::Malformed("timestamp past 2^63 - 1".into()));
    }
    Ok(())
}

/// A witness's cosignature of a checkpoint text at `timestamp` (POSIX seconds): the signature
/// line's content (key id, then the 8-byte big-endian timestamp and the ed25519 signature).
pub fn cosign(
    text: &str,
    name: &str,
    key: &SigningKey,
    timestamp: u64,
) -> Result<NoteSignature, NoteError> {
    check_cosigner(text, name, timestamp)?;
    let sig = key.sign(&cosigned_message(text, timestamp));
    let mut bytes = timestamp.to_be_bytes().to_vec();
    bytes.extend_from_slice(&sig.to_bytes());
    Ok(NoteSignature {
        name: name.to_string(),
        key_id: cosigner_key_id(name, &key.verifying_key()),
        signature: bytes,
    })
}

/// A witness's ML-DSA-44 cosignature (`subtree/v1`) of a checkpoint text at `timestamp`: key id,
/// then the 8-byte big-endian timestamp and the 2420-byte signature (pure ML-DSA, empty
/// context, FIPS 204's deterministic variant).
pub fn cosign_ml_dsa_44(
    text: &str,
    name: &str,
    key: &MlDsa44Secret,
    timestamp: u64,
) -> Result<NoteSignature, NoteError> {
    use ml_dsa::signature::Signer as _;
    check_cosigner(text, name, timestamp)?;
    let (origin, size, root, _) = checkpoint_head(text)?;
    let msg = subtree_message(name, timestamp, origin, size, &root)?;
    let sig = key
        .try_sign(&msg)
        .map_err(|e| NoteError::Malformed(format!("ML-DSA-44 signing failed: {e}")))?;
    let mut bytes = timestamp.to_be_bytes().to_vec();
    bytes.extend_from_slice(sig.encode().as_slice());
    Ok(NoteSignature {
        name: name.to_string(),
        key_id: CosignerKey::from(ml_dsa_44_public(key)).key_id(name),
        signature: bytes,
    })
}

impl SignedNote {
    /// The timestamp of the valid cosignature of the witness `name` with `key` (ed25519 or
    /// ML-DSA-44), if the note carries one (lines of other names or key ids are ignored, as the
    /// signed-note rules say).
    pub fn cosigned_by(&self, name: &str, key: impl Into<CosignerKey>) -> Result<u64, NoteError> {
        let key = key.into();
        let id = key.key_id(name);
        let line = self
            .signatures
            .iter()
            .find(|s| s.name == name && s.key_id == id)
            .ok_or_else(|| NoteError::Unsigned(name.to_string()))?;
        let bad = || NoteError::BadSignature(name.to_string());
        let sig_len = match key {
            CosignerKey::Ed25519(_) => 64,
            CosignerKey::MlDsa44(_) => ML_DSA_44_SIGNATURE_LEN,
        };
        if line.signature.len() != 8 + sig_len {
            return Err(bad());
        }
        let (ts, sig) = line.signature.split_at(8);
        let timestamp = u64::from_be_bytes(ts.try_into().expect("8 bytes"));
        if timestamp > i64::MAX as u64 {
            return Err(bad());
        }
        match &key {
            CosignerKey::Ed25519(k) => {
                let sig = ed25519_dalek::Signature::from_slice(sig).map_err(|_| bad())?;
                k.verify_strict(&cosigned_message(&self.text, timestamp), &sig)
                    .map_err(|_| bad())?;
            }
            CosignerKey::MlDsa44(k) => {
                use ml_dsa::signature::Verifier as _;
                let (origin, size, root, _) = checkpoint_head(&self.text).map_err(|_| bad())?;
                let msg =
                    subtree_message(name, timestamp, origin, size, &root).map_err(|_| bad())?;
                let sig = ml_dsa::Signature::<ml_dsa::MlDsa44>::try_from(sig).map_err(|_| bad())?;
                k.verify(&msg, &sig).map_err(|_| bad())?;
            }
        }
        Ok(timestamp)
    }

    /// Add signature lines (a witness's answer), replacing any line of the same name and key id.
    pub fn add_signatures(&mut self, lines: &[NoteSignature]) {
        for l in lines {
            self.signatures
                .retain(|s| !(s.name == l.name && s.key_id == l.key_id));
            self.signatures.push(l.clone());
        }
    }
}

/// Parse signature lines alone (a witness's answer to add-checkpoint).
pub fn parse_signature_lines(text: &str) -> Result<Vec<NoteSignature>, NoteError> {
    // The same rules as the lines of a note: borrow its parser with a one-line text.
    let n = SignedNote::parse(&format!("x\n\n{text}"))?;
    Ok(n.signatures)
}

/// The vkey of a witness's ed25519 cosigning key (`<name>+<hex key id>+<base64(0x04 ‖ key)>`).
pub fn cosigner_vkey(name: &str, key: &VerifyingKey) -> String {
    CosignerKey::from(key).vkey(name)
}

/// The body of a C2SP tlog-witness `add-checkpoint` request: the size the log says the witness
/// last cosigned, the consistency proof from it, and the checkpoint note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddCheckpoint {
    pub old_size: u64,
    pub proof: Vec<TreeHash>,
    pub checkpoint: String,
}

/// Most consistency proof lines a request may carry (tlog-witness).
pub const MAX_PROOF_LINES: usize = 63;

impl AddCheckpoint {
    pub fn encode(&self) -> String {
        let mut s = format!("old {}\n", self.old_size);
        for h in &self.proof {
            s.push_str(&B64.encode(h));
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&self.checkpoint);
        s
    }

    pub fn parse(body: &str) -> Result<AddCheckpoint, NoteError> {
        let bad = |w: &str| NoteError::Malformed(format!("add-checkpoint: {w}"));
        let (head, checkpoint) = body
            .split_once("\n\n")
            .ok_or_else(|| bad("no empty line before the checkpoint"))?;
        let mut lines = head.split('\n');
        let old = lines
            .next()
            .and_then(|l| l.strip_prefix("old "))
            .ok_or_else(|| bad("the first line must be \"old <size>\""))?;
        if old.is_empty()
            || !old.bytes().all(|b| b.is_ascii_digit())
            || (old.len() > 1 && old.starts_with('0'))
        {
            return Err(bad(
                "the old size must be a decimal number without leading zeros",
            ));
        }
        let old_size: u64 = old
            .parse()
            .map_err(|_| bad("the old size does not fit 64 bits"))?;
        let mut proof = Vec::new();
        for l in lines {
            let h: TreeHash = B64
                .decode(l)
                .ok()
                .and_then(|v| v.try_into().ok())
                .ok_or_else(|| bad("a proof line is not a 32-byte hash in base64"))?;
            proof.push(h);
            if proof.len() > MAX_PROOF_LINES {
                return Err(bad("more than 63 proof lines"));
            }
        }
        Ok(AddCheckpoint {
            old_size,
            proof,
            checkpoint: checkpoint.to_string(),
        })
    }
}

fn check_text(text: &str) -> Result<(), NoteError> {
    if !text.ends_with('\n') {
        return Err(NoteError::Malformed(
            "the text must end with a newline".into(),
        ));
    }
    if text.contains("\n\n") || text.starts_with('\n') {
        return Err(NoteError::Malformed(
            "the text must not hold a blank line".into(),
        ));
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(NoteError::Malformed("control character in the text".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> SigningKey {
        SigningKey::from_bytes(&[n; 32])
    }

    fn sample() -> CheckpointText {
        CheckpointText {
            origin: origin_of("casino-lisboa"),
            size: 1234,
            root: [7; 32],
            chain_head: Some([9; 32]),
        }
    }

    #[test]
    fn a_checkpoint_text_round_trips_and_refuses_what_a_ledger_never_writes() {
        let c = sample();
        let t = c.text();
        assert_eq!(
            t,
            format!(
                "casino-ledger/casino-lisboa\n1234\n{}\nblake3-chain-head {}\n",
                B64.encode([7u8; 32]),
                "09".repeat(32)
            )
        );
        assert_eq!(CheckpointText::parse(&t).unwrap(), c);
        let no_ext = CheckpointText {
            chain_head: None,
            ..c.clone()
        };
        assert_eq!(CheckpointText::parse(&no_ext.text()).unwrap(), no_ext);
        let root = B64.encode([7u8; 32]);
        for bad in [
            "casino-ledger/x\n1234\n".to_string(),
            format!("casino-ledger/x\n01234\n{root}\n"),
            format!("casino-ledger/x\n-1\n{root}\n"),
            format!("casino-ledger/x\n99999999999999999999\n{root}\n"),
            format!("\n1\n{root}\n"),
            format!("casino-ledger/x\n1\n{root}"),
            "casino-ledger/x\n1\nAAAA\n".to_string(),
            format!("casino-ledger/x\n1\n{root}\nsomething else\n"),
            format!(
                "casino-ledger/x\n1\n{root}\nblake3-chain-head {}\n",
                "AB".repeat(32)
            ),
            format!("casino-ledger/x\n1\n{root}\nblake3-chain-head 00\n"),
        ] {
            assert!(CheckpointText::parse(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_signed_note_verifies_and_every_change_is_refused() {
        let k = key(1);
        let name = origin_of("casino-lisboa");
        let n = SignedNote::sign(&sample().text(), &name, &k).unwrap();
        let s = n.encode();
        let back = SignedNote::parse(&s).unwrap();
        assert_eq!(back, n);
        back.verify(&name, &k.verifying_key()).unwrap();
        // Another key, another name, a changed text, a changed signature.
        assert_eq!(
            back.verify(&name, &key(2).verifying_key()),
            Err(NoteError::Unsigned(name.clone()))
        );
        assert!(
            back.verify("casino-ledger/porto", &k.verifying_key())
                .is_err()
        );
        let changed = s.replacen("1234", "1233", 1);
        assert_eq!(
            SignedNote::parse(&changed)
                .unwrap()
                .verify(&name, &k.verifying_key()),
            Err(NoteError::BadSignature(name.clone()))
        );
        let mut forged = back.clone();
        forged.signatures[0].signature[10] ^= 1;
        assert!(forged.verify(&name, &k.verifying_key()).is_err());
        for bad in [
            s.trim_end_matches('\n').to_string(),
            s.replace("\n\n", "\n"),
            s.replace('\u{2014}', "-"),
            s.replacen("casino-lisboa\n", "casino-lisboa\r\n", 1),
            format!("{s}\u{2014} x\n"),
        ] {
            assert!(SignedNote::parse(&bad).is_err(), "{bad:?}");
        }
        assert!(SignedNote::sign("no newline", &name, &k).is_err());
        assert!(SignedNote::sign("a\n", "a name", &k).is_err());
        assert!(SignedNote::sign("a\n", "a+b", &k).is_err());
    }

    /// A witness's cosignature: made over "cosignature/v1", its time and the note text; it
    /// verifies with the witness's key and name only, and any change is refused.
    #[test]
    fn cosignatures_bind_the_time_and_the_text() {
        let log = key(1);
        let witness = key(7);
        let name = origin_of("casino-lisboa");
        let mut n = SignedNote::sign(&sample().text(), &name, &log).unwrap();
        let line = cosign(&n.text, "inspectorate.pt/w1", &witness, 1_764_000_000).unwrap();
        assert_eq!(line.signature.len(), 72);
        let lines = parse_signature_lines(&format!(
            "\u{2014} {} {}\n",
            line.name,
            B64.encode([line.key_id.to_vec(), line.signature.clone()].concat())
        ))
        .unwrap();
        assert_eq!(lines, vec![line.clone()]);
        n.add_signatures(&lines);
        n.add_signatures(&lines);
        assert_eq!(n.signatures.len(), 2, "one line per name and key");
        let back = SignedNote::parse(&n.encode()).unwrap();
        let wk = witness.verifying_key();
        assert_eq!(
            back.cosigned_by("inspectorate.pt/w1", wk),
            Ok(1_764_000_000)
        );
        back.verify(&name, &log.verifying_key()).unwrap();
        // Another witness key or name; a changed time; a changed text.
        assert!(
            back.cosigned_by("inspectorate.pt/w1", key(8).verifying_key())
                .is_err()
        );
        assert!(back.cosigned_by("inspectorate.pt/w2", wk).is_err());
        let mut t = back.clone();
        t.signatures[1].signature[7] ^= 1;
        assert!(t.cosigned_by("inspectorate.pt/w1", wk).is_err());
        let mut t = back.clone();
        t.text = t.text.replacen("1234", "1235", 1);
        assert!(t.cosigned_by("inspectorate.pt/w1", wk).is_err());
        // The log's own signature is not a cosignature (another type byte, another message).
        assert!(back.cosigned_by(&name, log.verifying_key()).is_err());
        let v = cosigner_vkey("w", &wk);
        let parts: Vec<&str> = v.split('+').collect();
        assert_eq!(parts[1], hex::encode(cosigner_key_id("w", &wk)));
        assert_eq!(
            B64.decode(parts[2]).unwrap(),
            [&[4u8][..], wk.as_bytes()].concat()
        );
    }

    #[test]
    fn add_checkpoint_requests_round_trip_and_refuse_malformed_bodies() {
        let note = SignedNote::sign(&sample().text(), "casino-ledger/casino-lisboa", &key(1))
            .unwrap()
            .encode();
        let r = AddCheckpoint {
            old_size: 20,
            proof: vec![[1; 32], [2; 32]],
            checkpoint: note.clone(),
        };
        let body = r.encode();
        assert!(body.starts_with("old 20\n"));
        assert_eq!(AddCheckpoint::parse(&body).unwrap(), r);
        let zero = AddCheckpoint {
            old_size: 0,
            proof: vec![],
            checkpoint: note.clone(),
        };
        assert!(zero.encode().starts_with("old 0\n\n"));
        assert_eq!(AddCheckpoint::parse(&zero.encode()).unwrap(), zero);
        for bad in [
            format!("old 020\n\n{note}"),
            format!("old -1\n\n{note}"),
            format!("new 2\n\n{note}"),
            format!("old 2\nAAAA\n\n{note}"),
            format!("old 2\n{note}"),
            format!(
                "old 2\n{}\n{note}",
                format!("{}\n", B64.encode([0u8; 32])).repeat(64)
            ),
        ] {
            assert!(AddCheckpoint::parse(&bad).is_err(), "{bad:?}");
        }
    }

    /// The key id and the vkey format follow the C2SP example computed by hand: SHA-256 over
    /// the name, a newline, the type byte and the key.
    #[test]
    fn key_ids_hash_the_name_the_type_and_the_key() {
        let k = key(3).verifying_key();
        let mut h = Sha256::new();
        h.update(b"example.com/log\n\x01");
        h.update(k.as_bytes());
        let d = h.finalize();
        assert_eq!(key_id("example.com/log", &k), [d[0], d[1], d[2], d[3]]);
        let v = verifier_key("example.com/log", &k);
        let parts: Vec<&str> = v.split('+').collect();
        assert_eq!(parts[0], "example.com/log");
        assert_eq!(parts[1], hex::encode(&d[..4]));
        assert_eq!(B64.decode(parts[2]).unwrap()[0], 1);
        assert_eq!(&B64.decode(parts[2]).unwrap()[1..], k.as_bytes());
    }
}

#[cfg(test)]
mod ml_dsa_tests {
    use super::*;

    const W: &str = "inspectorate.example/w1";

    /// The checkpoint text the vectors in `testdata/mldsa44-cosignature.txt` cosign.
    fn text() -> String {
        CheckpointText {
            origin: origin_of("casino-lisboa"),
            size: 1234,
            root: [7; 32],
            chain_head: Some([9; 32]),
        }
        .text()
    }

    fn line_text(l: &NoteSignature) -> String {
        format!(
            "\u{2014} {} {}\n",
            l.name,
            B64.encode([l.key_id.to_vec(), l.signature.clone()].concat())
        )
    }

    fn seed() -> [u8; 32] {
        std::array::from_fn(|i| i as u8)
    }

    /// The vectors made by another implementation (Python's `cryptography`, OpenSSL's
    /// ML-DSA, with the C2SP message built from the specification in scripts/c2sp-mldsa44.py):
    /// the same seed gives the same key and key id; its cosignature verifies here; ours, which
    /// it verified, is what `cosign_ml_dsa_44` makes from the seed (deterministic signing).
    #[test]
    fn a_fixed_seed_matches_an_independent_implementation() {
        let data = include_str!("testdata/mldsa44-cosignature.txt");
        let lines: Vec<&str> = data.lines().filter(|l| !l.starts_with('#')).collect();
        let [vkey, python_line, our_line] = lines[..] else {
            panic!("three lines expected")
        };
        let k = ml_dsa_44_from_seed(&seed());
        let ours = CosignerKey::from(ml_dsa_44_public(&k));
        assert_eq!(ours.vkey(W), vkey);
        let (name, parsed) = CosignerKey::parse_vkey(vkey).unwrap();
        assert_eq!((name.as_str(), &parsed), (W, &ours));
        assert_eq!(ours.public_bytes().len(), ML_DSA_44_PUBLIC_KEY_LEN);
        let line = cosign_ml_dsa_44(&text(), W, &k, 1_764_000_000).unwrap();
        assert_eq!(line.signature.len(), 8 + ML_DSA_44_SIGNATURE_LEN);
        assert_eq!(line_text(&line), format!("{our_line}\n"));
        for l in [python_line, our_line] {
            let n = SignedNote::parse(&format!("{}\n{l}\n", text())).unwrap();
            assert_eq!(n.cosigned_by(W, &parsed), Ok(1_764_000_000), "{l}");
        }
    }

    /// A cosignature binds the cosigner's name, its time and the checkpoint's origin, size and
    /// root; each change is refused. Extension lines are not in the signed message (the spec's
    /// choice: the ledger's own signature covers them).
    #[test]
    fn ml_dsa_cosignatures_refuse_every_change() {
        let k = ml_dsa_44_from_seed(&[5; 32]);
        let key = CosignerKey::from(ml_dsa_44_public(&k));
        let log = SigningKey::from_bytes(&[1; 32]);
        let mut n = SignedNote::sign(&text(), &origin_of("casino-lisboa"), &log).unwrap();
        let line = cosign_ml_dsa_44(&n.text, W, &k, 1_764_000_000).unwrap();
        n.add_signatures(std::slice::from_ref(&line));
        let n = SignedNote::parse(&n.encode()).unwrap();
        assert_eq!(n.cosigned_by(W, &key), Ok(1_764_000_000));
        let bad = Err(NoteError::BadSignature(W.to_string()));
        let edit = |from: &str, to: &str| {
            let mut t = n.clone();
            assert!(t.text.contains(from), "{from}");
            t.text = t.text.replacen(from, to, 1);
            t.cosigned_by(W, &key)
        };
        assert_eq!(edit("1234", "1235"), bad, "size");
        assert_eq!(edit("casino-lisboa", "casino-porto"), bad, "origin");
        let root = B64.encode([7u8; 32]);
        assert_eq!(edit(&root, &B64.encode([8u8; 32])), bad, "root");
        assert_eq!(edit("1234\n", "1234\nextra\n"), bad, "root line moved");
        assert_eq!(
            edit(&"09".repeat(32), &"0a".repeat(32)),
            Ok(1_764_000_000),
            "extension lines are not signed by subtree/v1"
        );
        let mut t = n.clone();
        t.signatures[1].signature[7] ^= 1;
        assert_eq!(t.cosigned_by(W, &key), bad, "timestamp");
        let mut t = n.clone();
        t.signatures[1].signature[100] ^= 1;
        assert_eq!(t.cosigned_by(W, &key), bad, "signature");
        let mut t = n.clone();
        t.signatures[1].signature.pop();
        assert_eq!(t.cosigned_by(W, &key), bad, "length");
        // The name is in the message: the line renamed, with the key id of the new name.
        let mut t = n.clone();
        t.signatures[1].name = "inspectorate.example/w2".into();
        t.signatures[1].key_id = key.key_id("inspectorate.example/w2");
        assert_eq!(
            t.cosigned_by("inspectorate.example/w2", &key),
            Err(NoteError::BadSignature("inspectorate.example/w2".into()))
        );
        // Another key, or the line asked for under another name.
        let other = CosignerKey::from(ml_dsa_44_public(&ml_dsa_44_from_seed(&[6; 32])));
        assert_eq!(n.cosigned_by(W, &other), Err(NoteError::Unsigned(W.into())));
        assert!(n.cosigned_by("inspectorate.example/w2", &key).is_err());
        assert!(cosign_ml_dsa_44(&text(), "a b", &k, 1).is_err());
        assert!(cosign_ml_dsa_44(&text(), W, &k, u64::MAX).is_err());
        assert!(cosign_ml_dsa_44("not a checkpoint\n", W, &k, 1).is_err());
    }

    /// A witness with both keys signs two lines under one name; each verifies with its own key,
    /// and a line of the other type is ignored (another key id) or refused (forged key id).
    #[test]
    fn the_two_types_of_one_witness_are_told_apart() {
        let ed = SigningKey::from_bytes(&[7; 32]);
        let ml = ml_dsa_44_from_seed(&[8; 32]);
        let ml_key = CosignerKey::from(ml_dsa_44_public(&ml));
        let log = SigningKey::from_bytes(&[1; 32]);
        let base = SignedNote::sign(&text(), &origin_of("casino-lisboa"), &log).unwrap();
        let ed_line = cosign(&base.text, W, &ed, 1_764_000_001).unwrap();
        let ml_line = cosign_ml_dsa_44(&base.text, W, &ml, 1_764_000_002).unwrap();
        let mut both = base.clone();
        both.add_signatures(&[ed_line.clone(), ml_line.clone()]);
        assert_eq!(both.signatures.len(), 3, "one line per name and key id");
        let both = SignedNote::parse(&both.encode()).unwrap();
        assert_eq!(both.cosigned_by(W, ed.verifying_key()), Ok(1_764_000_001));
        assert_eq!(both.cosigned_by(W, &ml_key), Ok(1_764_000_002));
        let mut only_ed = base.clone();
        only_ed.add_signatures(std::slice::from_ref(&ed_line));
        assert_eq!(
            only_ed.cosigned_by(W, &ml_key),
            Err(NoteError::Unsigned(W.into()))
        );
        let mut forged = base.clone();
        let mut l = ed_line.clone();
        l.key_id = ml_key.key_id(W);
        forged.add_signatures(&[l]);
        assert_eq!(
            forged.cosigned_by(W, &ml_key),
            Err(NoteError::BadSignature(W.into()))
        );
        assert_ne!(
            CosignerKey::from(ed.verifying_key()).key_id(W),
            ml_key.key_id(W)
        );
    }

    #[test]
    fn keys_round_trip_through_pem_and_vkeys_and_bad_ones_are_refused() {
        let k = ml_dsa_44_from_seed(&[9; 32]);
        let pem = ml_dsa_44_secret_pem(&k).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{pem}");
        let back = ml_dsa_44_secret_from_pem(&pem).unwrap();
        assert_eq!(back.to_seed(), k.to_seed());
        let public = ml_dsa_44_public(&k);
        let ppem = ml_dsa_44_public_pem(&public).unwrap();
        assert!(ppem.starts_with("-----BEGIN PUBLIC KEY-----\n"), "{ppem}");
        assert_eq!(ml_dsa_44_public_from_pem(&ppem).unwrap(), public);
        assert!(ml_dsa_44_secret_from_pem(&ppem).is_err());
        assert!(ml_dsa_44_public_from_pem(&pem).is_err());
        let ed_pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJ\n-----END PRIVATE KEY-----\n";
        assert!(ml_dsa_44_secret_from_pem(ed_pem).is_err());
        let key = CosignerKey::from(public);
        let v = key.vkey(W);
        assert_eq!(
            CosignerKey::parse_vkey(&v).unwrap(),
            (W.to_string(), key.clone())
        );
        let ed = CosignerKey::from(SigningKey::from_bytes(&[3; 32]).verifying_key());
        assert_eq!(CosignerKey::parse_vkey(&ed.vkey(W)).unwrap().1, ed);
        let (_, id, b64) = {
            let p: Vec<&str> = v.splitn(3, '+').collect();
            (p[0], p[1], p[2])
        };
        let raw = B64.decode(b64).unwrap();
        for bad in [
            format!("{W}+{id}"),
            format!("w2+{id}+{b64}"),
            format!("{W}+00000000+{b64}"),
            format!("{W}+{id}+{}", B64.encode(&raw[..raw.len() - 1])),
            format!("{W}+{id}+{}", B64.encode([&[1u8][..], &raw[1..]].concat())),
            format!("{W}+{id}+not base64"),
            format!("a b+{id}+{b64}"),
        ] {
            assert!(CosignerKey::parse_vkey(&bad).is_err(), "{bad}");
        }
    }
}
