//! Signing domains, keys, and signature verification (strict single, and batched with a
//! strict fallback that finds the bad signatures).
//!
//! Every signature covers `DOMAIN || body`, where DOMAIN says what the signature is for, so a
//! signature made for one purpose (a device event) can never be presented as another (a
//! checkpoint). The body is the exact bytes that were signed, stored as received.

use std::collections::HashMap;
use std::iter::once;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha512};

/// Domain of device, operator and regulator events: `"casino-ledger/v1/event\n"` and a NUL
/// (24 bytes).
pub const EVENT_DOMAIN: &[u8] = b"casino-ledger/v1/event\n\0";
/// Domain of the ledger's own records (genesis, principals, security findings).
pub const LEDGER_RECORD_DOMAIN: &[u8] = b"casino-ledger/v1/ledger-record\n\0";
/// Domain of checkpoints.
pub const CHECKPOINT_DOMAIN: &[u8] = b"casino-ledger/v1/checkpoint\n\0";

/// Why a key or signature could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("public key must be 32 bytes, got {0}")]
    PublicKeyLength(usize),
    #[error("public key is not a valid ed25519 point")]
    PublicKeyInvalid,
    #[error("public key is weak (small order); refused")]
    PublicKeyWeak,
    #[error("signature must be 64 bytes, got {0}")]
    SignatureLength(usize),
    #[error("secret key must be 32 bytes (64 hex digits), got {0} bytes")]
    SecretKeyLength(usize),
    #[error("not hex: {0}")]
    NotHex(String),
    #[error("not a PEM ed25519 key: {0}")]
    Pem(String),
}

/// `domain || body`: the message an ed25519 signature covers.
pub fn signed_message(domain: &[u8], body: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(domain.len() + body.len());
    m.extend_from_slice(domain);
    m.extend_from_slice(body);
    m
}

/// Sign `domain || body`.
pub fn sign(key: &SigningKey, domain: &[u8], body: &[u8]) -> Signature {
    key.sign(&signed_message(domain, body))
}

/// Whatever signs for the ledger (its records and checkpoints): a key in memory, or a key that
/// never leaves a hardware module (PKCS#11, in ledger-store). Signing may fail only for the latter.
pub trait LedgerSigner {
    type Error: std::fmt::Display;
    /// The public key the signatures verify with.
    fn public_key(&self) -> VerifyingKey;
    /// An ed25519 signature of `message` (pure Ed25519, RFC 8032).
    fn sign_message(&self, message: &[u8]) -> Result<Signature, Self::Error>;
}

impl LedgerSigner for SigningKey {
    type Error = std::convert::Infallible;
    fn public_key(&self) -> VerifyingKey {
        self.verifying_key()
    }
    fn sign_message(&self, message: &[u8]) -> Result<Signature, Self::Error> {
        Ok(self.sign(message))
    }
}

/// Sign `domain || body` with a [`LedgerSigner`].
pub fn try_sign<S: LedgerSigner + ?Sized>(
    key: &S,
    domain: &[u8],
    body: &[u8],
) -> Result<Signature, S::Error> {
    key.sign_message(&signed_message(domain, body))
}

/// A public key from bytes, refusing invalid and weak (small-order) keys. Batch verification does
/// not check for weak keys, so every key the ledger trusts goes through here first.
pub fn parse_public_key(bytes: &[u8]) -> Result<VerifyingKey, KeyError> {
    let arr: [u8; 32] = bytes
        .try_into()
        .map_err(|_| KeyError::PublicKeyLength(bytes.len()))?;
    let key = VerifyingKey::from_bytes(&arr).map_err(|_| KeyError::PublicKeyInvalid)?;
    if key.is_weak() {
        return Err(KeyError::PublicKeyWeak);
    }
    Ok(key)
}

/// A public key from hex.
pub fn parse_public_key_hex(s: &str) -> Result<VerifyingKey, KeyError> {
    let b = hex::decode(s.trim()).map_err(|e| KeyError::NotHex(e.to_string()))?;
    parse_public_key(&b)
}

/// A secret key from hex (the 32-byte seed).
pub fn parse_secret_key_hex(s: &str) -> Result<SigningKey, KeyError> {
    let b = hex::decode(s.trim()).map_err(|e| KeyError::NotHex(e.to_string()))?;
    let arr: [u8; 32] = b
        .as_slice()
        .try_into()
        .map_err(|_| KeyError::SecretKeyLength(b.len()))?;
    Ok(SigningKey::from_bytes(&arr))
}

/// A secret key from a key file's text: PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, what
/// `ledgerctl keygen` writes) or the 32-byte seed in hex (what it wrote before).
pub fn parse_secret_key_text(s: &str) -> Result<SigningKey, KeyError> {
    use ed25519_dalek::pkcs8::DecodePrivateKey;
    if s.trim_start().starts_with("-----BEGIN") {
        SigningKey::from_pkcs8_pem(s.trim()).map_err(|e| KeyError::Pem(e.to_string()))
    } else {
        parse_secret_key_hex(s)
    }
}

/// A public key from a file's or a setting's text: SubjectPublicKeyInfo PEM
/// (`-----BEGIN PUBLIC KEY-----`) or 32 bytes in hex.
pub fn parse_public_key_text(s: &str) -> Result<VerifyingKey, KeyError> {
    use ed25519_dalek::pkcs8::DecodePublicKey;
    if s.trim_start().starts_with("-----BEGIN") {
        let k = VerifyingKey::from_public_key_pem(s.trim())
            .map_err(|e| KeyError::Pem(e.to_string()))?;
        parse_public_key(k.as_bytes())
    } else {
        parse_public_key_hex(s)
    }
}

/// A secret key as PKCS#8 PEM (v1: the seed only), for a key file.
pub fn secret_key_pem(key: &SigningKey) -> String {
    use ed25519_dalek::pkcs8::EncodePrivateKey;
    // v1 (RFC 8410: the seed only), which every PKCS#8 reader takes; the v2 form with the
    // public key appended is refused by some (OpenSSL-based ones among them).
    ed25519_dalek::pkcs8::KeypairBytes {
        secret_key: key.to_bytes(),
        public_key: None,
    }
    .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
    .map(|z| z.to_string())
    .expect("an ed25519 seed always encodes")
}

/// A signature from bytes (64).
pub fn parse_signature(bytes: &[u8]) -> Result<Signature, KeyError> {
    Signature::from_slice(bytes).map_err(|_| KeyError::SignatureLength(bytes.len()))
}

/// Strict single verification of `domain || body` (rejects malleable signatures and weak keys).
pub fn verify_strict(key: &VerifyingKey, domain: &[u8], body: &[u8], sig: &Signature) -> bool {
    key.verify_strict(&signed_message(domain, body), sig)
        .is_ok()
}

/// One signature to check: the full signed message (`domain || body`), the signature and the key.
#[derive(Clone, Debug)]
pub struct SignatureCheck {
    pub message: Vec<u8>,
    pub signature: Signature,
    pub key: VerifyingKey,
}

/// Check many signatures. Returns one bool per check, true when the signature is valid: the
/// verdict of [`verify_strict`], signature by signature (see [`verify_prepared`]).
pub fn verify_many(checks: &[SignatureCheck]) -> Vec<bool> {
    let prepared: Vec<Option<PreparedSignature>> = checks
        .iter()
        .map(|c| PreparedSignature::new(&c.key, &[], &c.message, &c.signature))
        .collect();
    verify_prepared(&prepared)
}

/// A signature made ready for [`verify_prepared`]: R decoded, s read, the challenge
/// `h = SHA-512(R ‖ A ‖ domain ‖ body) mod l` computed. This is about half of the work of
/// verifying it, and needs nothing from the other signatures, so ingest does it for each envelope
/// as it arrives, on whichever core is free, and a group's batch check is left with one
/// multiscalar multiplication.
#[derive(Clone, Debug)]
pub struct PreparedSignature {
    key: VerifyingKey,
    r: EdwardsPoint,
    s: Scalar,
    h: Scalar,
}

impl PreparedSignature {
    /// `None` when the signature cannot be valid under [`VerifyingKey::verify_strict`]: s not
    /// canonical, R not the canonical encoding of a point of large order ([`strict_r`]), or a
    /// weak (small-order) key.
    pub fn new(
        key: &VerifyingKey,
        domain: &[u8],
        body: &[u8],
        signature: &Signature,
    ) -> Option<PreparedSignature> {
        let (r_bytes, s_bytes) = (signature.r_bytes(), signature.s_bytes());
        let s = Option::<Scalar>::from(Scalar::from_canonical_bytes(*s_bytes))?;
        let r = strict_r(r_bytes)?;
        // `key.is_weak()`, from the key's bytes (see `small_order_encoding`).
        if small_order_encoding(key.as_bytes()) {
            return None;
        }
        let hram: [u8; 64] = Sha512::new()
            .chain_update(r_bytes)
            .chain_update(key.as_bytes())
            .chain_update(domain)
            .chain_update(body)
            .finalize()
            .into();
        Some(PreparedSignature {
            key: *key,
            r,
            s,
            h: Scalar::from_bytes_mod_order_wide(&hram),
        })
    }

    /// Strict single verification: `s·B = R + h·A`, exactly (no cofactor). With the checks of
    /// [`PreparedSignature::new`], this is [`VerifyingKey::verify_strict`]'s verdict.
    fn holds(&self) -> bool {
        EdwardsPoint::vartime_double_scalar_mul_basepoint(&-self.h, &self.key.to_edwards(), &self.s)
            == self.r
    }
}

/// Verify prepared signatures (`None`: refused when prepared). Returns one bool per item.
///
/// A whole range is first checked at once ([`batch_ok`]); when the range fails, it is split in
/// halves down to strict single verification, so the bad signatures are found with few extra
/// checks.
pub fn verify_prepared(items: &[Option<PreparedSignature>]) -> Vec<bool> {
    let mut out = vec![false; items.len()];
    let ready: Vec<&PreparedSignature> = items.iter().flatten().collect();
    let mut verdicts = vec![false; ready.len()];
    verify_range(&ready, &mut verdicts);
    let mut verdicts = verdicts.into_iter();
    for (o, item) in out.iter_mut().zip(items) {
        if item.is_some() {
            *o = verdicts.next().unwrap_or(false);
        }
    }
    out
}

fn verify_range(items: &[&PreparedSignature], out: &mut [bool]) {
    match items.len() {
        0 => {}
        1 => out[0] = items[0].holds(),
        _ => {
            if batch_ok(items) {
                out.iter_mut().for_each(|o| *o = true);
            } else {
                let mid = items.len() / 2;
                let (a, b) = items.split_at(mid);
                let (oa, ob) = out.split_at_mut(mid);
                verify_range(a, oa);
                verify_range(b, ob);
            }
        }
    }
}

/// Context of the derivation of a batch's weights (blake3 `derive_key`).
const BATCH_WEIGHTS_CONTEXT: &str = "casino-ledger v1 ed25519 batch weights";

/// R as [`VerifyingKey::verify_strict`] accepts it: a canonical encoding (y < p) of a point that
/// is not of small order. (The only points with x = 0, whose sign bit could be a second encoding,
/// are of small order.)
fn strict_r(bytes: &[u8; 32]) -> Option<EdwardsPoint> {
    if y_at_least_p(bytes) || small_order_encoding(bytes) {
        return None;
    }
    CompressedEdwardsY(*bytes).decompress()
}

/// Does the encoding's y coordinate (sign bit left out) read as p or more? Such an encoding is
/// not canonical: curve25519-dalek decodes it as y − p (0 to 18).
fn y_at_least_p(bytes: &[u8; 32]) -> bool {
    bytes[31] & 0x7f == 0x7f && bytes[1..31].iter().all(|&b| b == 0xff) && bytes[0] >= 0xed
}

/// The y coordinates, as canonical little-endian encodings, of the eight points of small order
/// (the 8-torsion, `curve25519_dalek::constants::EIGHT_TORSION`): 1 (the identity), p − 1 (order
/// 2), 0 (the two points of order 4) and ±y₈ (the four of order 8). A test derives them again.
const SMALL_ORDER_Y: [[u8; 32]; 5] = [
    hex32("0100000000000000000000000000000000000000000000000000000000000000"),
    hex32("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    hex32("0000000000000000000000000000000000000000000000000000000000000000"),
    hex32("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
    hex32("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
];

/// 32 bytes from 64 hex digits, at compile time.
const fn hex32(s: &str) -> [u8; 32] {
    const fn digit(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => panic!("not a lowercase hex digit"),
        }
    }
    let s = s.as_bytes();
    assert!(s.len() == 64);
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = digit(s[2 * i]) << 4 | digit(s[2 * i + 1]);
        i += 1;
    }
    out
}

/// Would this encoding decode (as curve25519-dalek decodes it, non-canonical y and either sign
/// bit included) to a point of small order? Exactly when its y coordinate, reduced mod p, is one
/// of [`SMALL_ORDER_Y`]: a point is determined by y up to the sign of x, and the negation of a
/// point of small order is of small order too.
///
/// This is `EdwardsPoint::is_small_order` on the decoded point, read from the bytes: that check
/// multiplies by the cofactor and compares projectively (three doublings, four multiplications,
/// four reductions to bytes), and ingest needs it twice per event (R, and the signer's key).
/// A test compares the two on every encoding near the small-order ones and at random.
fn small_order_encoding(bytes: &[u8; 32]) -> bool {
    let mut y = *bytes;
    y[31] &= 0x7f;
    if y_at_least_p(&y) {
        // y − p is y[0] − 0xed (0 to 18); of those only 0 and 1 are small-order y coordinates.
        return y[0] - 0xed <= 1;
    }
    SMALL_ORDER_Y.contains(&y)
}

/// Do all of `items` hold? One multiscalar multiplication checks the random linear combination
///
/// `Σ zᵢ·Rᵢ + Σₖ (Σ_{i: Aᵢ = k} zᵢ·hᵢ)·k − (Σ zᵢ·sᵢ)·B = 0`
///
/// of the equations `sᵢ·B = Rᵢ + hᵢ·Aᵢ`, weighted by 128-bit `zᵢ`. Unlike ed25519-dalek's
/// `verify_batch` (the same equation otherwise), the terms of one key are summed into one point,
/// so a batch of n signatures by k devices costs n + k + 1 points instead of 2n + 1: a device
/// sends many events, and a group holds many of each device's.
///
/// The weights are derived (blake3 XOF) from every `hᵢ` (which binds Rᵢ, Aᵢ and the message) and
/// `sᵢ`, so they depend on every byte of the batch: a forger would have to fix the signatures
/// before learning the weights, and the verdict is the same on every machine. As for every
/// cofactorless batch equation, a signature whose error is a small-order point passes with
/// probability at most 1/2 (`zᵢ` even); only the key's holder can make one, and where a batch
/// fails, strict single verification decides.
fn batch_ok(items: &[&PreparedSignature]) -> bool {
    let mut weights = blake3::Hasher::new_derive_key(BATCH_WEIGHTS_CONTEXT);
    let mut key_of = Vec::with_capacity(items.len());
    let mut keys: Vec<&VerifyingKey> = Vec::new();
    let mut key_index: HashMap<[u8; 32], usize> = HashMap::new();
    for it in items {
        weights.update(it.h.as_bytes());
        weights.update(it.s.as_bytes());
        key_of.push(*key_index.entry(*it.key.as_bytes()).or_insert_with(|| {
            keys.push(&it.key);
            keys.len() - 1
        }));
    }
    let mut xof = weights.finalize_xof();
    let mut zs = Vec::with_capacity(items.len());
    let mut b_coefficient = Scalar::ZERO;
    let mut key_coefficients = vec![Scalar::ZERO; keys.len()];
    for (it, &k) in items.iter().zip(&key_of) {
        let mut z = [0u8; 16];
        xof.fill(&mut z);
        let z = Scalar::from(u128::from_le_bytes(z));
        b_coefficient += z * it.s;
        key_coefficients[k] += z * it.h;
        zs.push(z);
    }
    EdwardsPoint::vartime_multiscalar_mul(
        once(-b_coefficient).chain(zs).chain(key_coefficients),
        once(ED25519_BASEPOINT_POINT)
            .chain(items.iter().map(|it| it.r))
            .chain(keys.iter().map(|k| k.to_edwards())),
    )
    .is_identity()
}

#[cfg(test)]
mod tests {
    #[test]
    fn key_files_read_pkcs8_pem_and_hex_alike() {
        let k = SigningKey::from_bytes(&[9; 32]);
        let pem = secret_key_pem(&k);
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{pem}");
        assert_eq!(
            parse_secret_key_text(&pem).unwrap().to_bytes(),
            k.to_bytes()
        );
        assert_eq!(
            parse_secret_key_text(&format!("{}\n", hex::encode(k.to_bytes())))
                .unwrap()
                .to_bytes(),
            k.to_bytes()
        );
        assert!(matches!(
            parse_secret_key_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"),
            Err(KeyError::Pem(_))
        ));
        use ed25519_dalek::pkcs8::EncodePublicKey;
        let pub_pem = k
            .verifying_key()
            .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap();
        assert_eq!(parse_public_key_text(&pub_pem).unwrap(), k.verifying_key());
        assert_eq!(
            parse_public_key_text(&hex::encode(k.verifying_key().as_bytes())).unwrap(),
            k.verifying_key()
        );
    }

    use super::*;

    fn key(n: u8) -> SigningKey {
        SigningKey::from_bytes(&[n; 32])
    }

    /// An event signed by `k`, as a check.
    fn signed(k: &SigningKey, body: &[u8]) -> SignatureCheck {
        SignatureCheck {
            message: signed_message(EVENT_DOMAIN, body),
            signature: sign(k, EVENT_DOMAIN, body),
            key: k.verifying_key(),
        }
    }

    /// Keys in hex (configuration files, `ledgerctl`): surrounding blanks are ignored; anything
    /// but 32 bytes of a strong key is refused, saying why.
    #[test]
    fn keys_from_hex() {
        let k = key(5);
        let public = hex::encode(k.verifying_key().as_bytes());
        assert_eq!(parse_public_key_hex(&public), Ok(k.verifying_key()));
        assert_eq!(
            parse_public_key_hex(&format!(" {public}\n")),
            Ok(k.verifying_key())
        );
        assert!(matches!(
            parse_public_key_hex("zz"),
            Err(KeyError::NotHex(_))
        ));
        assert_eq!(
            parse_public_key_hex(&public[..62]),
            Err(KeyError::PublicKeyLength(31))
        );
        let secret = hex::encode(k.to_bytes());
        assert_eq!(
            parse_secret_key_hex(&secret).map(|s| s.to_bytes()),
            Ok(k.to_bytes())
        );
    }

    /// y ≥ p, read from the bytes with the sign bit (bit 255) either way: p = 2^255 − 19 is
    /// `ed ff … ff 7f` little-endian; p − 1 is the largest canonical y.
    #[test]
    fn non_canonical_y_whatever_the_sign_bit() {
        let enc = |low: u8, high: u8| {
            let mut b = [0xffu8; 32];
            b[0] = low;
            b[31] = high;
            b
        };
        for sign in [0x00, 0x80] {
            assert!(y_at_least_p(&enc(0xed, 0x7f | sign)), "p, sign {sign:#x}");
            assert!(
                y_at_least_p(&enc(0xff, 0x7f | sign)),
                "2^255 - 1, sign {sign:#x}"
            );
            assert!(
                !y_at_least_p(&enc(0xec, 0x7f | sign)),
                "p - 1, sign {sign:#x}"
            );
            assert!(
                !y_at_least_p(&enc(0xff, 0x7e | sign)),
                "below p, sign {sign:#x}"
            );
            assert!(
                !y_at_least_p(&enc(0xff, sign)),
                "far below p, sign {sign:#x}"
            );
        }
        let mut hole = enc(0xff, 0x7f);
        hole[17] = 0xfe;
        assert!(!y_at_least_p(&hole));
    }

    #[test]
    fn domains_are_distinct_and_nul_terminated() {
        assert_eq!(EVENT_DOMAIN.len(), 24);
        for d in [EVENT_DOMAIN, LEDGER_RECORD_DOMAIN, CHECKPOINT_DOMAIN] {
            assert_eq!(d.last(), Some(&0));
        }
        let k = key(1);
        let sig = sign(&k, EVENT_DOMAIN, b"x");
        assert!(verify_strict(&k.verifying_key(), EVENT_DOMAIN, b"x", &sig));
        assert!(!verify_strict(
            &k.verifying_key(),
            CHECKPOINT_DOMAIN,
            b"x",
            &sig
        ));
    }

    #[test]
    fn batch_finds_every_bad_signature() {
        let keys: Vec<SigningKey> = (1..=9).map(key).collect();
        let mut checks: Vec<SignatureCheck> = (0..100)
            .map(|i| signed(&keys[i % keys.len()], format!("event {i}").as_bytes()))
            .collect();
        assert!(verify_many(&checks).iter().all(|&b| b));
        checks[3].message[30] ^= 1;
        checks[77].key = keys[0].verifying_key(); // signed by keys[77 % 9] = keys[5]
        let r = verify_many(&checks);
        let bad: Vec<usize> = (0..r.len()).filter(|&i| !r[i]).collect();
        assert_eq!(bad, vec![3, 77]);
    }

    /// Ways to spoil one signature check; each must fail strict verification.
    #[derive(Clone, Copy, Debug)]
    enum Spoil {
        /// A byte of the signed message changed.
        Message,
        /// Another device's key named as the signer.
        OtherKey,
        /// s replaced by s + l: the same value mod l, not canonical.
        SPlusL,
        /// R = the identity (small order) with s = h·a, which satisfies sB = R + hA.
        IdentityR,
        /// R's y coordinate encoded as y + p (only possible for y < 19), otherwise a valid
        /// signature over that encoding.
        NonCanonicalR,
    }

    /// The batch equation alone over `checks`, without the checks of [`PreparedSignature::new`]
    /// (R decoded as it comes): what the equation would say if those checks were missing.
    fn batch_ok_checks(checks: &[SignatureCheck]) -> bool {
        let prepared: Option<Vec<PreparedSignature>> = checks
            .iter()
            .map(|c| {
                let s =
                    Option::<Scalar>::from(Scalar::from_canonical_bytes(*c.signature.s_bytes()))
                        .unwrap_or(Scalar::from_bytes_mod_order(*c.signature.s_bytes()));
                let r = CompressedEdwardsY(*c.signature.r_bytes()).decompress()?;
                let hram: [u8; 64] = Sha512::new()
                    .chain_update(c.signature.r_bytes())
                    .chain_update(c.key.as_bytes())
                    .chain_update(&c.message)
                    .finalize()
                    .into();
                Some(PreparedSignature {
                    key: c.key,
                    r,
                    s,
                    h: Scalar::from_bytes_mod_order_wide(&hram),
                })
            })
            .collect();
        prepared.is_some_and(|p| batch_ok(&p.iter().collect::<Vec<_>>()))
    }

    fn add_l(s: &[u8; 32]) -> [u8; 32] {
        // l = 2^252 + 27742317777372353535851937790883648493, little-endian.
        let l: [u8; 32] = [
            0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
            0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x10,
        ];
        let (mut out, mut carry) = ([0u8; 32], 0u16);
        for i in 0..32 {
            let v = s[i] as u16 + l[i] as u16 + carry;
            out[i] = v as u8;
            carry = v >> 8;
        }
        out
    }

    /// A signature with the given R bytes that satisfies sB = R + hA for the point R decodes to,
    /// where R = the identity: s = h·a.
    fn sign_with_identity_r(key: &SigningKey, r_bytes: [u8; 32], message: &[u8]) -> Signature {
        let h = Scalar::from_bytes_mod_order_wide(
            &Sha512::new()
                .chain_update(r_bytes)
                .chain_update(key.verifying_key().as_bytes())
                .chain_update(message)
                .finalize()
                .into(),
        );
        let s = h * key.to_scalar();
        Signature::from_components(r_bytes, s.to_bytes())
    }

    fn spoil(c: &mut SignatureCheck, how: Spoil, keys: &[SigningKey], signer: usize) {
        match how {
            Spoil::Message => c.message[EVENT_DOMAIN.len()] ^= 0x20,
            Spoil::OtherKey => c.key = keys[(signer + 1) % keys.len()].verifying_key(),
            Spoil::SPlusL => {
                c.signature =
                    Signature::from_components(*c.signature.r_bytes(), add_l(c.signature.s_bytes()))
            }
            Spoil::IdentityR => {
                let mut r = [0u8; 32];
                r[0] = 1;
                c.signature = sign_with_identity_r(&keys[signer], r, &c.message);
            }
            Spoil::NonCanonicalR => {
                // y = 1 + p: the identity again, so the equation holds but the encoding does not.
                let mut r = [0xffu8; 32];
                r[0] = 0xee;
                r[31] = 0x7f;
                c.signature = sign_with_identity_r(&keys[signer], r, &c.message);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// The batched verdict is strict single verification's, signature by signature, whatever
        /// the mix of devices and of spoiled signatures.
        #[test]
        fn verify_many_agrees_with_strict_verification(
            n_keys in 1usize..6,
            n in 1usize..48,
            spoiled in proptest::collection::vec((0usize..48, 0usize..5), 0..4),
        ) {
            let keys: Vec<SigningKey> = (1..=n_keys as u8).map(key).collect();
            let signer = |i: usize| (i * 7 + i / 3) % n_keys;
            let mut checks: Vec<SignatureCheck> = (0..n)
                .map(|i| signed(&keys[signer(i)], format!("event {i} of a batch of {n}").as_bytes()))
                .collect();
            let ways = [Spoil::Message, Spoil::OtherKey, Spoil::SPlusL, Spoil::IdentityR, Spoil::NonCanonicalR];
            for (at, how) in spoiled {
                if at < n && !(n_keys == 1 && matches!(ways[how], Spoil::OtherKey)) {
                    spoil(&mut checks[at], ways[how], &keys, signer(at));
                }
            }
            let strict: Vec<bool> = checks
                .iter()
                .map(|c| c.key.verify_strict(&c.message, &c.signature).is_ok())
                .collect();
            proptest::prop_assert_eq!(verify_many(&checks), strict);
        }
    }

    #[test]
    fn every_spoiled_signature_is_refused_alone_and_in_a_batch() {
        let keys: Vec<SigningKey> = (1..=3).map(key).collect();
        for how in [
            Spoil::Message,
            Spoil::OtherKey,
            Spoil::SPlusL,
            Spoil::IdentityR,
            Spoil::NonCanonicalR,
        ] {
            let mut checks: Vec<SignatureCheck> = (0..6)
                .map(|i| signed(&keys[i % 3], &[i as u8; 40]))
                .collect();
            assert!(batch_ok_checks(&checks));
            spoil(&mut checks[4], how, &keys, 1);
            let c = &checks[4];
            assert!(
                c.key.verify_strict(&c.message, &c.signature).is_err(),
                "{how:?}"
            );
            assert!(
                PreparedSignature::new(&c.key, &[], &c.message, &c.signature)
                    .is_none_or(|p| !p.holds()),
                "{how:?}"
            );
            // s + l and R = the identity satisfy the equation: only the checks on s and R refuse
            // them.
            let equation_holds =
                matches!(how, Spoil::SPlusL | Spoil::IdentityR | Spoil::NonCanonicalR);
            assert_eq!(batch_ok_checks(&checks), equation_holds, "{how:?}");
            assert_eq!(
                verify_many(&checks),
                vec![true, true, true, true, false, true],
                "{how:?}"
            );
        }
    }

    #[test]
    fn r_must_be_a_canonical_encoding_of_a_point_of_large_order() {
        // The spoils above that keep sB = R + hA are refused by the R checks, not by chance.
        let k = key(4);
        let m = signed_message(EVENT_DOMAIN, b"x");
        let mut r = [0u8; 32];
        r[0] = 1;
        let sig = sign_with_identity_r(&k, r, &m);
        let s = Scalar::from_canonical_bytes(*sig.s_bytes()).unwrap();
        let h = Scalar::from_bytes_mod_order_wide(
            &Sha512::new()
                .chain_update(r)
                .chain_update(k.verifying_key().as_bytes())
                .chain_update(&m)
                .finalize()
                .into(),
        );
        assert_eq!(
            EdwardsPoint::mul_base(&s),
            h * k.verifying_key().to_edwards(),
            "sB = hA (+ the identity)"
        );
        assert!(strict_r(&r).is_none(), "R = identity is of small order");
        let mut non_canonical = [0xffu8; 32];
        non_canonical[0] = 0xee;
        non_canonical[31] = 0x7f;
        assert!(
            CompressedEdwardsY(non_canonical).decompress().is_some(),
            "y + p decodes"
        );
        assert!(strict_r(&non_canonical).is_none());
        // A point of large order whose y < 19 has a second encoding, y + p: refused.
        let mut large_order_twice_encoded = 0;
        for y in 2u8..19 {
            let mut canonical = [0u8; 32];
            canonical[0] = y;
            let Some(p) = CompressedEdwardsY(canonical).decompress() else {
                continue;
            };
            if p.is_small_order() {
                continue;
            }
            let mut plus_p = [0xffu8; 32];
            plus_p[31] = 0x7f;
            plus_p[0] = 0xed + y; // y + 2^255 - 19, little-endian
            assert_eq!(CompressedEdwardsY(plus_p).decompress(), Some(p), "y = {y}");
            assert!(strict_r(&canonical).is_some(), "y = {y}");
            assert!(strict_r(&plus_p).is_none(), "y = {y} encoded as y + p");
            large_order_twice_encoded += 1;
        }
        assert!(large_order_twice_encoded > 0);
        let honest = sign(&k, EVENT_DOMAIN, b"x");
        assert!(strict_r(honest.r_bytes()).is_some());
    }

    #[test]
    fn the_small_order_y_coordinates_are_those_of_the_eight_torsion() {
        use curve25519_dalek::constants::EIGHT_TORSION;
        let mut from_torsion: Vec<[u8; 32]> = EIGHT_TORSION
            .iter()
            .map(|t| {
                let mut y = t.compress().to_bytes();
                y[31] &= 0x7f;
                y
            })
            .collect();
        from_torsion.sort();
        from_torsion.dedup();
        let mut table = SMALL_ORDER_Y.to_vec();
        table.sort();
        assert_eq!(from_torsion, table);
        assert!(EIGHT_TORSION.iter().all(|t| t.is_small_order()));
    }

    /// `small_order_encoding` against decoding and `is_small_order`, on one encoding: the
    /// verdicts must agree wherever the encoding decodes.
    fn agrees_with_decoding(bytes: &[u8; 32]) -> bool {
        match CompressedEdwardsY(*bytes).decompress() {
            Some(p) => small_order_encoding(bytes) == p.is_small_order(),
            None => true,
        }
    }

    #[test]
    fn small_order_encodings_are_read_from_the_bytes_exactly() {
        let mut decodable_small = std::collections::BTreeSet::new();
        let mut checked = 0;
        // Every y within 40 of a small-order y coordinate, of 0 and of 2^255 (non-canonical
        // y + p), with both sign bits.
        let mut centres: Vec<[u8; 32]> = SMALL_ORDER_Y.to_vec();
        let mut top = [0xffu8; 32];
        top[31] = 0x7f;
        centres.push(top);
        for centre in centres {
            for delta in -40i32..=40 {
                let mut y = centre;
                // y += delta, little-endian with carries, within 255 bits.
                let mut carry = delta;
                for b in y.iter_mut() {
                    let v = i32::from(*b) + carry;
                    *b = v.rem_euclid(256) as u8;
                    carry = v.div_euclid(256);
                    if carry == 0 {
                        break;
                    }
                }
                if y[31] & 0x80 != 0 {
                    continue; // wrapped past 2^255 or below 0
                }
                for sign in [0u8, 0x80] {
                    let mut e = y;
                    e[31] |= sign;
                    assert!(agrees_with_decoding(&e), "{}", hex::encode(e));
                    checked += 1;
                    if small_order_encoding(&e) && CompressedEdwardsY(e).decompress().is_some() {
                        decodable_small.insert(e);
                    }
                }
            }
        }
        // 5 canonical y coordinates and the 2 non-canonical ones (p, p + 1), each with both
        // sign bits, all decode to a point of small order.
        assert_eq!(decodable_small.len(), 14, "of {checked}");
        // And at random.
        let mut x = blake3::Hasher::new().update(b"small order").finalize_xof();
        for _ in 0..20_000 {
            let mut e = [0u8; 32];
            x.fill(&mut e);
            assert!(agrees_with_decoding(&e), "{}", hex::encode(e));
            assert!(!small_order_encoding(&e));
        }
        // Every key and R of an honest signature.
        for n in 1..=50u8 {
            let k = key(n);
            assert!(!small_order_encoding(k.verifying_key().as_bytes()));
            assert!(!small_order_encoding(
                sign(&k, EVENT_DOMAIN, &[n]).r_bytes()
            ));
        }
    }

    #[test]
    fn weak_keys_are_refused() {
        // The identity point (small order) encoded as a public key.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert_eq!(parse_public_key(&identity), Err(KeyError::PublicKeyWeak));
        assert_eq!(parse_public_key(&[1, 2]), Err(KeyError::PublicKeyLength(2)));
        assert!(parse_public_key(key(3).verifying_key().as_bytes()).is_ok());
    }
}
