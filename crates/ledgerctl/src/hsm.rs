//! `ledgerctl hsm`: the ledger's Ed25519 key pair in a PKCS#11 token (an HSM; SoftHSM2 in tests):
//! create it, or print its public key (for `ledger_public_key`).

use std::path::PathBuf;

use anyhow::Context;
use ledger_store::{Pkcs11Config, Pkcs11Signer};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Create the ledger's Ed25519 key pair in the token (never extractable); prints its public key.
    Keygen(Token),
    /// Print the public key of the ledger's key pair in the token.
    Pubkey(Token),
}

/// The token and key: the same values as ledgerd's `[ledger_key]`.
#[derive(clap::Args, Debug)]
pub struct Token {
    /// The token's PKCS#11 module (shared library).
    #[arg(
        long,
        value_name = "SO",
        default_value = "/usr/lib/softhsm/libsofthsm2.so"
    )]
    pub module: PathBuf,
    /// Label of the token.
    #[arg(long, value_name = "LABEL")]
    pub token: String,
    /// Label of the key pair.
    #[arg(long, value_name = "LABEL", default_value = "ledger-signing")]
    pub label: String,
    /// File (mode 0600) whose first line is the token's user PIN.
    #[arg(long, value_name = "FILE")]
    pub pin_file: PathBuf,
}

pub fn run(c: Command, json: bool) -> anyhow::Result<i32> {
    let (t, create) = match c {
        Command::Keygen(t) => (t, true),
        Command::Pubkey(t) => (t, false),
    };
    let pin = ledger_store::read_pin_file(&t.pin_file).context("--pin-file")?;
    let cfg = Pkcs11Config {
        module: t.module,
        token_label: t.token,
        key_label: t.label,
        pin,
    };
    let public = if create {
        Pkcs11Signer::generate(&cfg)?
    } else {
        Pkcs11Signer::public_key(&cfg)?
    };
    let public = hex::encode(public.as_bytes());
    if json {
        println!(
            "{}",
            serde_json::json!({"token": cfg.token_label, "key_label": cfg.key_label, "public_key": public})
        );
    } else {
        if create {
            println!(
                "created key pair {:?} in token {:?}",
                cfg.key_label, cfg.token_label
            );
        }
        println!("public key: {public}");
        println!("pin it in ledgerd's configuration: ledger_public_key = \"{public}\"");
    }
    Ok(0)
}
