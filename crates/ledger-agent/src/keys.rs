//! Key files: `NAME.key` holds the ed25519 key in PKCS#8 PEM (mode 0600; a 32-byte seed in hex,
//! as older versions wrote it, is read too), `NAME.pub` the 32-byte public key in hex (what
//! ledgerd's configuration and `device register --public-key` take; a PEM public key is read
//! too).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};

use crate::AgentError;

/// A new random key.
pub fn generate() -> SigningKey {
    let mut seed = [0u8; 32];
    rand::fill(&mut seed);
    SigningKey::from_bytes(&seed)
}

/// Paths of the two files for `base` (`base.key`, `base.pub`).
pub fn paths(base: &Path) -> (PathBuf, PathBuf) {
    let s = base.as_os_str().to_owned();
    let mut k = s.clone();
    k.push(".key");
    let mut p = s;
    p.push(".pub");
    (PathBuf::from(k), PathBuf::from(p))
}

/// Write `base.key` (0600, refusing to overwrite) and `base.pub`.
pub fn write_pair(base: &Path, key: &SigningKey) -> Result<(PathBuf, PathBuf), AgentError> {
    let (kp, pp) = paths(base);
    let io = |p: &Path, e: std::io::Error| AgentError::Key(format!("{}: {e}", p.display()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&kp)
        .map_err(|e| io(&kp, e))?;
    f.write_all(ledger_core::signing::secret_key_pem(key).as_bytes())
        .map_err(|e| io(&kp, e))?;
    std::fs::write(
        &pp,
        format!("{}\n", hex::encode(key.verifying_key().as_bytes())),
    )
    .map_err(|e| io(&pp, e))?;
    Ok((kp, pp))
}

/// Read a secret key file.
pub fn read_secret(path: &Path) -> Result<SigningKey, AgentError> {
    let t = std::fs::read_to_string(path)
        .map_err(|e| AgentError::Key(format!("{}: {e}", path.display())))?;
    ledger_core::signing::parse_secret_key_text(&t)
        .map_err(|e| AgentError::Key(format!("{}: {e}", path.display())))
}

/// Read a public key: a `.pub` file, or 64 hex digits given directly.
pub fn read_public(path_or_hex: &str) -> Result<VerifyingKey, AgentError> {
    let text = if Path::new(path_or_hex).is_file() {
        std::fs::read_to_string(path_or_hex)
            .map_err(|e| AgentError::Key(format!("{path_or_hex}: {e}")))?
    } else {
        path_or_hex.to_string()
    };
    ledger_core::signing::parse_public_key_text(&text)
        .map_err(|e| AgentError::Key(format!("{path_or_hex}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_round_trip_with_private_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("table-1");
        let k = generate();
        let (kp, pp) = write_pair(&base, &k).unwrap();
        assert_eq!(
            std::fs::metadata(&kp).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read_secret(&kp).unwrap().to_bytes(), k.to_bytes());
        assert_eq!(
            read_public(pp.to_str().unwrap()).unwrap(),
            k.verifying_key()
        );
        assert!(write_pair(&base, &k).is_err(), "never overwrites a key");
    }

    #[test]
    fn each_generated_key_is_new() {
        assert_ne!(generate().to_bytes(), generate().to_bytes());
    }

    #[test]
    fn the_two_files_are_named_after_the_base() {
        let (k, p) = paths(Path::new("/keys/table-1"));
        assert_eq!(k, Path::new("/keys/table-1.key"));
        assert_eq!(p, Path::new("/keys/table-1.pub"));
    }

    #[test]
    fn the_public_key_file_is_its_hex_and_a_key_is_read_from_hex_too() {
        let d = tempfile::tempdir().unwrap();
        let k = SigningKey::from_bytes(&[4; 32]);
        let (kp, pp) = write_pair(&d.path().join("slot-9"), &k).unwrap();
        assert_eq!((kp.clone(), pp.clone()), paths(&d.path().join("slot-9")));
        let hex = hex::encode(k.verifying_key().as_bytes());
        assert_eq!(std::fs::read_to_string(&pp).unwrap(), format!("{hex}\n"));
        assert_eq!(read_public(&hex).unwrap(), k.verifying_key());
        // An older agent's key file: the 32-byte seed in hex.
        let old = d.path().join("old.key");
        std::fs::write(&old, hex::encode([4u8; 32])).unwrap();
        assert_eq!(read_secret(&old).unwrap().to_bytes(), k.to_bytes());
    }

    #[test]
    fn a_missing_or_bad_key_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("none.key");
        match read_secret(&missing) {
            Err(AgentError::Key(m)) => {
                assert!(m.starts_with(&missing.display().to_string()), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let bad = d.path().join("bad.key");
        std::fs::write(&bad, "not a key").unwrap();
        match read_secret(&bad) {
            Err(AgentError::Key(m)) => assert!(m.starts_with(&bad.display().to_string()), "{m}"),
            other => panic!("{other:?}"),
        }
        match read_public("abcd") {
            Err(AgentError::Key(m)) => assert!(m.starts_with("abcd: "), "{m}"),
            other => panic!("{other:?}"),
        }
        let bad_pub = d.path().join("bad.pub");
        std::fs::write(&bad_pub, "zz").unwrap();
        assert!(matches!(
            read_public(bad_pub.to_str().unwrap()),
            Err(AgentError::Key(_))
        ));
    }
}
