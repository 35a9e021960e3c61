//! `ledgerctl keygen`: a key pair for a device, an operator or a regulator.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Base path: writes OUT.key (secret, PKCS#8 PEM, mode 0600) and OUT.pub; never overwrites.
    #[arg(long, value_name = "OUT")]
    pub out: PathBuf,
}

pub fn run(a: Args, json: bool) -> anyhow::Result<i32> {
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
