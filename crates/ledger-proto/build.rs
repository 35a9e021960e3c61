//! Generates the prost messages (always), the tonic services (feature `grpc`) and the canonical
//! JSON mapping (feature `json`, pbjson) from
//! `proto/casino_ledger/v1`. protoc comes from protoc-bin-vendored unless `PROTOC` is set.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = match std::env::var_os("PROTOC") {
        Some(p) => PathBuf::from(p),
        None => protoc_bin_vendored::protoc_bin_path()?,
    };
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let grpc = std::env::var_os("CARGO_FEATURE_GRPC").is_some();
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);
    // A durable group's signed head is the same in each of its receipts, and its receipts'
    // paths are slices of one buffer: shared, not copied (a client decoding them from the
    // stream's buffer copies nothing either).
    config.bytes([
        ".casino_ledger.v1.SignedGroupHead",
        ".casino_ledger.v1.Receipt.group_path",
    ]);
    tonic_prost_build::configure()
        .build_server(grpc)
        .build_client(grpc)
        .file_descriptor_set_path(out.join("casino_ledger_v1_descriptor.bin"))
        .compile_with_config(
            config,
            &[
                root.join("casino_ledger/v1/events.proto"),
                root.join("casino_ledger/v1/ledger.proto"),
                root.join("casino_ledger/v1/audit.proto"),
                root.join("casino_ledger/v1/mirror.proto"),
            ],
            std::slice::from_ref(&root),
        )?;
    if std::env::var_os("CARGO_FEATURE_JSON").is_some() {
        let descriptors = std::fs::read(out.join("casino_ledger_v1_descriptor.bin"))?;
        pbjson_build::Builder::new()
            .register_descriptors(&descriptors)?
            .build(&[".casino_ledger.v1"])?;
    }
    println!("cargo:rerun-if-changed={}", root.display());
    println!("cargo:rerun-if-env-changed=PROTOC");
    Ok(())
}
