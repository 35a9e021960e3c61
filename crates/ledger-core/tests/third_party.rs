//! The ledger's proofs, checkpoints and notes, checked by third-party implementations that
//! share no code with ours: `tlog_tiles` and `signed_note` (Cloudflare's ports of Go's
//! `golang.org/x/mod/sumdb/tlog` and `note`), pinned in the workspace.

use ed25519_dalek::SigningKey;
use ledger_core::merkle::{self, Frontier, MemoryTree};
use ledger_core::note::{CheckpointText, SignedNote, origin_of, verifier_key};
use proptest::prelude::*;

fn th(h: &merkle::TreeHash) -> tlog_tiles::Hash {
    tlog_tiles::Hash(*h)
}

/// A tree of `n` leaves, and the root of every size up to `n` when `all_roots` (costly: for
/// small trees only).
fn tree(n: u64, all_roots: bool) -> (MemoryTree, Vec<merkle::TreeHash>) {
    let mut t = MemoryTree::new();
    let mut roots = vec![merkle::empty_root()];
    for i in 0..n {
        t.push(merkle::leaf_hash(format!("entry {i}").as_bytes()));
        if all_roots {
            roots.push(t.root());
        }
    }
    (t, roots)
}

#[test]
fn leaf_and_node_hashes_are_rfc_6962s() {
    for data in [&b""[..], b"x", &[0u8; 600]] {
        assert_eq!(tlog_tiles::record_hash(data).0, merkle::leaf_hash(data));
    }
    let (a, b) = ([1u8; 32], [2u8; 32]);
    assert_eq!(
        tlog_tiles::node_hash(tlog_tiles::Hash(a), tlog_tiles::Hash(b)).0,
        merkle::node_hash(&a, &b)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Inclusion and consistency proofs of any position in trees of up to 70,000 leaves (three
    /// tile levels) are accepted by the third-party checker, against its own root.
    #[test]
    fn proofs_are_accepted_by_tlog_tiles(n in 1u64..70_000, m_frac in 0.0f64..1.0, k_frac in 0.0f64..1.0) {
        let (mut t, _) = tree(n, false);
        let root = t.root();
        let mut f = Frontier::new();
        for i in 0..n {
            f.push(merkle::leaf_hash(format!("entry {i}").as_bytes()));
        }
        prop_assert_eq!(f.root(), root);
        let m = ((n as f64 * m_frac) as u64).min(n - 1);
        let leaf = merkle::leaf_hash(format!("entry {m}").as_bytes());
        let p: Vec<_> = merkle::inclusion_proof(&mut t, m, n).unwrap().iter().map(th).collect();
        prop_assert!(tlog_tiles::check_record(&p, n, th(&root), m, th(&leaf)).is_ok());
        let k = ((n as f64 * k_frac) as u64).clamp(1, n);
        let old = merkle::subtree_root(&mut t, 0, k).unwrap();
        let c: Vec<_> = merkle::consistency_proof(&mut t, k, n).unwrap().iter().map(th).collect();
        prop_assert!(tlog_tiles::check_tree(&c, n, th(&root), k, th(&old)).is_ok());
    }
}

/// Our verifiers accept exactly what the third-party checker accepts, on every position of the
/// small trees, for genuine proofs and for proofs with one hash changed.
#[test]
fn our_checks_agree_with_tlog_tiles() {
    let (mut t, roots) = tree(40, true);
    for n in 1..=40u64 {
        for m in 0..n {
            let leaf = merkle::leaf_hash(format!("entry {m}").as_bytes());
            let mut p = merkle::inclusion_proof(&mut t, m, n).unwrap();
            for tamper in [false, true] {
                if tamper {
                    if p.is_empty() {
                        continue;
                    }
                    p[0][31] ^= 1;
                }
                let ours = merkle::verify_inclusion(&leaf, m, n, &p, &roots[n as usize]).is_ok();
                let q: Vec<_> = p.iter().map(th).collect();
                let theirs =
                    tlog_tiles::check_record(&q, n, th(&roots[n as usize]), m, th(&leaf)).is_ok();
                assert_eq!(ours, theirs, "inclusion {m} in {n}, tampered {tamper}");
                assert_eq!(ours, !tamper);
            }
        }
        for m in 1..=n {
            let mut p = merkle::consistency_proof(&mut t, m, n).unwrap();
            for tamper in [false, true] {
                if tamper {
                    if p.is_empty() {
                        continue;
                    }
                    p[0][0] ^= 0x80;
                }
                let (r1, r2) = (&roots[m as usize], &roots[n as usize]);
                let ours = merkle::verify_consistency(m, n, &p, r1, r2).is_ok();
                let q: Vec<_> = p.iter().map(th).collect();
                let theirs = tlog_tiles::check_tree(&q, n, th(r2), m, th(r1)).is_ok();
                assert_eq!(ours, theirs, "consistency {m} to {n}, tampered {tamper}");
            }
        }
    }
}

/// A ledger checkpoint note parses as a C2SP checkpoint and verifies with a standard note
/// verifier given the ledger's vkey; a note changed after signing does not.
#[test]
fn checkpoint_notes_verify_with_signed_note() {
    let key = SigningKey::from_bytes(&[42; 32]);
    let origin = origin_of("casino-lisboa");
    let text = CheckpointText {
        origin: origin.clone(),
        size: 77,
        root: [3; 32],
        chain_head: Some([4; 32]),
    }
    .text();
    let note = SignedNote::sign(&text, &origin, &key).unwrap().encode();

    let parsed = tlog_tiles::Checkpoint::from_bytes(text.as_bytes()).expect("a C2SP checkpoint");
    assert_eq!(parsed.origin(), origin);
    assert_eq!(parsed.size(), 77);
    assert_eq!(parsed.hash().0, [3; 32]);

    let vkey = verifier_key(&origin, &key.verifying_key());
    let verifier = signed_note::StandardVerifier::new(&vkey).expect("our vkey format");
    let list = signed_note::VerifierList::new(vec![Box::new(verifier)]);
    let n = signed_note::Note::from_bytes(note.as_bytes()).expect("a C2SP note");
    let (verified, _) = n.verify(&list).expect("the ledger's signature");
    assert_eq!(verified.len(), 1);

    let changed = note.replacen("\n77\n", "\n78\n", 1);
    let n = signed_note::Note::from_bytes(changed.as_bytes()).unwrap();
    assert!(n.verify(&list).is_err());
}
