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
    fn line(&self) -> String {
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
            s.push_str(&sig.line());
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

/// The key id of a witness's ed25519 cosigning key: `SHA-256(name ‖ "\n" ‖ 0x04 ‖ key)[..4]`.
pub fn cosigner_key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([COSIGNATURE_TYPE]);
    h.update(key.as_bytes());
    let d = h.finalize();
    [d[0], d[1], d[2], d[3]]
}

/// The message a `cosignature/v1` signs: two header lines and the checkpoint's note text.
fn cosigned_message(text: &str, timestamp: u64) -> Vec<u8> {
    format!("cosignature/v1\ntime {timestamp}\n{text}").into_bytes()
}

/// A witness's cosignature of a checkpoint text at `timestamp` (POSIX seconds): the signature
/// line's content (key id, then the 8-byte big-endian timestamp and the ed25519 signature).
pub fn cosign(
    text: &str,
    name: &str,
    key: &SigningKey,
    timestamp: u64,
) -> Result<NoteSignature, NoteError> {
    check_text(text)?;
    if !valid_name(name) {
        return Err(NoteError::Malformed(format!("bad key name {name:?}")));
    }
    if timestamp > i64::MAX as u64 {
        return Err(NoteError::Malformed("timestamp past 2^63 - 1".into()));
    }
    let sig = key.sign(&cosigned_message(text, timestamp));
    let mut bytes = timestamp.to_be_bytes().to_vec();
    bytes.extend_from_slice(&sig.to_bytes());
    Ok(NoteSignature {
        name: name.to_string(),
        key_id: cosigner_key_id(name, &key.verifying_key()),
        signature: bytes,
    })
}

impl SignedNote {
    /// The timestamp of the valid cosignature of the witness `name` with `key`, if the note
    /// carries one (lines of other names or key ids are ignored, as the signed-note rules say).
    pub fn cosigned_by(&self, name: &str, key: &VerifyingKey) -> Result<u64, NoteError> {
        let id = cosigner_key_id(name, key);
        let line = self
            .signatures
            .iter()
            .find(|s| s.name == name && s.key_id == id)
            .ok_or_else(|| NoteError::Unsigned(name.to_string()))?;
        let bad = || NoteError::BadSignature(name.to_string());
        if line.signature.len() != 8 + 64 {
            return Err(bad());
        }
        let timestamp = u64::from_be_bytes(line.signature[..8].try_into().expect("8 bytes"));
        if timestamp > i64::MAX as u64 {
            return Err(bad());
        }
        let sig = ed25519_dalek::Signature::from_slice(&line.signature[8..]).map_err(|_| bad())?;
        key.verify_strict(&cosigned_message(&self.text, timestamp), &sig)
            .map_err(|_| bad())?;
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
    let mut k = vec![COSIGNATURE_TYPE];
    k.extend_from_slice(key.as_bytes());
    format!(
        "{name}+{}+{}",
        hex::encode(cosigner_key_id(name, key)),
        B64.encode(k)
    )
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
            back.cosigned_by("inspectorate.pt/w1", &wk),
            Ok(1_764_000_000)
        );
        back.verify(&name, &log.verifying_key()).unwrap();
        // Another witness key or name; a changed time; a changed text.
        assert!(
            back.cosigned_by("inspectorate.pt/w1", &key(8).verifying_key())
                .is_err()
        );
        assert!(back.cosigned_by("inspectorate.pt/w2", &wk).is_err());
        let mut t = back.clone();
        t.signatures[1].signature[7] ^= 1;
        assert!(t.cosigned_by("inspectorate.pt/w1", &wk).is_err());
        let mut t = back.clone();
        t.text = t.text.replacen("1234", "1235", 1);
        assert!(t.cosigned_by("inspectorate.pt/w1", &wk).is_err());
        // The log's own signature is not a cosignature (another type byte, another message).
        assert!(back.cosigned_by(&name, &log.verifying_key()).is_err());
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
