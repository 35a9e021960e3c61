//! The ledger's own ed25519 key: `ledger.key` in the data directory, or a file the
//! configuration names outside it (`ledger_key_file`), in PKCS#8 PEM (a seed in hex, as older
//! ledgers wrote it, is read too); created for a new ledger with mode 0600 and refused if anyone
//! but the owner can read it.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use ed25519_dalek::SigningKey;

use crate::StoreError;

/// File name of the ledger key inside the data directory.
pub const LEDGER_KEY_FILE: &str = "ledger.key";

/// A new random signing key (OS randomness).
pub fn generate_key() -> SigningKey {
    let mut seed = [0u8; 32];
    rand::fill(&mut seed);
    SigningKey::from_bytes(&seed)
}

/// Load `dir/ledger.key`, or create it if `create` and it does not exist.
pub fn load_or_create(dir: &Path, create: bool) -> Result<SigningKey, StoreError> {
    load_or_create_at(&dir.join(LEDGER_KEY_FILE), create)
}

/// Load the key file at `path`, or create it if `create` and it does not exist.
pub fn load_or_create_at(path: &Path, create: bool) -> Result<SigningKey, StoreError> {
    let path = path.to_path_buf();
    let dir = path.parent().unwrap_or(Path::new("."));
    if !path.exists() {
        if !create {
            return Err(StoreError::Key(format!(
                "{} does not exist",
                path.display()
            )));
        }
        let key = generate_key();
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| StoreError::Key(format!("cannot create {}: {e}", path.display())))?;
        f.write_all(ledger_core::signing::secret_key_pem(&key).as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| StoreError::Key(format!("cannot write {}: {e}", path.display())))?;
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StoreError::Key(format!("cannot sync {}: {e}", dir.display())))?;
        return Ok(key);
    }
    let meta = std::fs::metadata(&path)
        .map_err(|e| StoreError::Key(format!("{}: {e}", path.display())))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(StoreError::Key(format!(
            "{} is accessible by group or others (mode {:o}); run chmod 600 on it",
            path.display(),
            meta.permissions().mode() & 0o777
        )));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| StoreError::Key(format!("{}: {e}", path.display())))?;
    ledger_core::signing::parse_secret_key_text(&text)
        .map_err(|e| StoreError::Key(format!("{}: {e}", path.display())))
}
