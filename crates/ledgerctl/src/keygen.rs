//! `ledgerctl keygen`: a key pair for a device, an operator or a regulator, or (`--ml-dsa-44`)
//! a witness's ML-DSA-44 cosigning key.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;

use anyhow::Context as _;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Base path: writes OUT.key (secret, PKCS#8 PEM, mode 0600) and OUT.pub; never overwrites.
    #[arg(long, value_name = "OUT")]
    pub out: PathBuf,
    /// An ML-DSA-44 key (a witness's post-quantum cosigning key) instead of ed25519.
    #[arg(long = "ml-dsa-44")]
    pub ml_dsa_44: bool,
}

pub fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    if a.ml_dsa_44 {
        return ml_dsa_44(a, json);
    }
    let key = ledger_agent::keys::generate();
    let (k, p) = ledger_agent::keys::write_pair(&a.out, &key)?;
    let public = hex::encode(key.verifying_key().as_bytes());
    if json {
        println!(
            "{}",
            serde_json::json!({"secret_key_file": k, "public_key_file": p, "public_key": public})
        );
    } else {
        println!(
            "wrote {} (secret, keep it private) and {}",
            k.display(),
            p.display()
        );
        println!("public key: {public}");
    }
    Ok(0)
}

/// OUT.key: the 32-byte seed as PKCS#8 PEM (RFC 9881's seed form), mode 0600; OUT.pub: the
/// 1312-byte public key as SubjectPublicKeyInfo PEM.
fn ml_dsa_44(a: Args, json: bool) -> anyhow::Result<i32> {
    use ledger_core::note;
    let mut seed = [0u8; 32];
    rand::fill(&mut seed[..]);
    let key = note::ml_dsa_44_from_seed(&seed);
    seed.fill(0);
    let public = note::ml_dsa_44_public(&key);
    let with_ext = |ext: &str| {
        let mut p = a.out.clone().into_os_string();
        p.push(ext);
        PathBuf::from(p)
    };
    let (kp, pp) = (with_ext(".key"), with_ext(".pub"));
    if pp.exists() {
        anyhow::bail!("--out: {} exists; keygen never overwrites", pp.display());
    }
    let secret = note::ml_dsa_44_secret_pem(&key)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&kp)
        .with_context(|| format!("--out: {}", kp.display()))?;
    f.write_all(secret.as_bytes())
        .and_then(|_| f.sync_all())
        .with_context(|| kp.display().to_string())?;
    std::fs::write(&pp, note::ml_dsa_44_public_pem(&public)?)
        .with_context(|| pp.display().to_string())?;
    if json {
        println!(
            "{}",
            serde_json::json!({"secret_key_file": kp, "public_key_file": pp,
                "algorithm": "ML-DSA-44"})
        );
    } else {
        println!(
            "wrote {} (ML-DSA-44 secret seed, keep it private) and {} (public key, 1312 bytes)",
            kp.display(),
            pp.display()
        );
        println!("use it with `ledgerctl witness serve --ml-dsa-key`, which prints its vkey");
    }
    Ok(0)
}
