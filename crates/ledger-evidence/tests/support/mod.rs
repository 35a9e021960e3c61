//! Test support: an in-process fake ledgerd that answers the four RPCs `build` and
//! `build_device` use (Audit.GetRound, Query.GetDevice and ListDeviceEntries, Proofs.
//! GetInclusionProof, Checkpoints.GetLatest) as crates/ledgerd/src answers them, from a fixed set
//! of entries; and a small synthetic ledger, signed with test keys, for what the documented
//! example does not hold (key rotations, forged genesis records and registrations).

#![allow(dead_code)] // each test target uses part of it

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::SigningKey;
use ledger_core::merkle::{self, LevelTree, TreeHash};
use ledger_core::note::{CheckpointText, SignedNote};
use ledger_core::proto::{
    self as v1, audit_server::AuditServer, checkpoints_server::CheckpointsServer,
    event_body::Payload as P, ledger_record_body::Record, proofs_server::ProofsServer,
    query_server::QueryServer,
};
use ledger_core::signing::{self, EVENT_DOMAIN, LEDGER_RECORD_DOMAIN};
use ledger_core::{RecordKind, make_entry};
use prost::Message;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

pub const EXAMPLE: &str = include_str!("../../../../docs/examples/evidence-round.json");
pub const EXAMPLE_KEY: &str = include_str!("../../../../docs/examples/evidence-ledger.pub");
pub const EXAMPLE_ROUND: &str = "T02-roulette-french-00004";
pub const EXAMPLE_TABLE: &str = "T02-roulette-french";
pub const EXAMPLE_DEVICE: &str = "dev-T02-roulette-french";

pub fn example() -> serde_json::Value {
    serde_json::from_str(EXAMPLE).unwrap()
}

pub fn example_key() -> ed25519_dalek::VerifyingKey {
    signing::parse_public_key_hex(EXAMPLE_KEY.trim()).unwrap()
}

/// The entry of a bundle item.
pub fn entry_of(item: &serde_json::Value) -> v1::ChainEntry {
    let bytes = B64.decode(item["entry"].as_str().unwrap()).unwrap();
    v1::ChainEntry::decode(bytes.as_slice()).unwrap()
}

/// A bundle's entries as (index, role).
pub fn roles(bundle: &serde_json::Value) -> Vec<(u64, String)> {
    bundle["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["index"].as_u64().unwrap(),
                e["role"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// How the fake proves an entry.
#[derive(Clone)]
pub enum Proofs {
    /// The proofs in the tree of the latest checkpoint, as given (the example's).
    Fixed(BTreeMap<u64, Vec<Vec<u8>>>),
    /// Every leaf of the ledger: proofs in any tree up to the durable size.
    Leaves(Vec<TreeHash>),
}

/// What the fake ledgerd holds. Everything is public so that a test can withhold a part.
#[derive(Clone)]
pub struct Fake {
    /// The entries it can serve (the example holds only some of its ledger's).
    pub entries: BTreeMap<u64, v1::ChainEntry>,
    /// Durable entries (the real ledger's head + 1).
    pub durable: u64,
    /// The latest checkpoint's note and tree size; `None`: no checkpoint yet.
    pub checkpoint: Option<(String, u64)>,
    /// The latest cosigned checkpoint's note and size; `None`: no witnesses configured.
    pub cosigned: Option<(String, u64)>,
    pub proofs: Proofs,
    pub devices: BTreeMap<String, v1::DeviceInfo>,
    /// Each round's (table, round) and what GetRound answers for it.
    pub rounds: Vec<((String, String), v1::RoundDetail)>,
    /// Answer inclusion proofs without their entry.
    pub proofs_without_entry: bool,
}

impl Fake {
    /// The ledger the documented example comes from, as far as the example shows it: its 22
    /// entries, their proofs in the checkpoint's tree, the round, the table device registered at
    /// entry 3 by `operator-1`, declared at entry 1.
    pub fn example() -> Fake {
        let b = example();
        let note = b["checkpoint"].as_str().unwrap().to_string();
        let size = checkpoint_size(&note);
        let mut entries = BTreeMap::new();
        let mut proofs = BTreeMap::new();
        let mut round_entries = Vec::new();
        for item in b["entries"].as_array().unwrap() {
            let e = entry_of(item);
            let hashes = item["proof"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| B64.decode(h.as_str().unwrap()).unwrap())
                .collect();
            proofs.insert(e.index, hashes);
            if ["configuration", "opening", "event", "settlement"]
                .contains(&item["role"].as_str().unwrap())
            {
                round_entries.push(e.clone());
            }
            entries.insert(e.index, e);
        }
        let findings = b["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::from_value(f.clone()).unwrap())
            .collect();
        let round = v1::RoundDetail {
            summary_json: serde_json::to_string(&b["round"]).unwrap(),
            entries: round_entries,
            adjudication_json: serde_json::to_string(&b["adjudication"]).unwrap(),
            explanation: String::new(),
            findings,
        };
        let mut devices = BTreeMap::new();
        devices.insert(
            EXAMPLE_DEVICE.to_string(),
            device_info(EXAMPLE_DEVICE, "table", 3),
        );
        devices.insert(
            "operator-1".to_string(),
            device_info("operator-1", "operator", 1),
        );
        Fake {
            entries,
            durable: size,
            checkpoint: Some((note, size)),
            cosigned: None,
            proofs: Proofs::Fixed(proofs),
            devices,
            rounds: vec![((EXAMPLE_TABLE.into(), EXAMPLE_ROUND.into()), round)],
            proofs_without_entry: false,
        }
    }

    /// Serve it on 127.0.0.1 (a port of its own) and connect.
    pub async fn serve(self) -> tonic::transport::Channel {
        let fake = Arc::new(self);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // Without TCP_NODELAY each answer waits for the client's delayed ACK (40 ms).
        let incoming = tokio_stream::StreamExt::map(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            |s| s.inspect(|s| s.set_nodelay(true).unwrap()),
        );
        let server = tonic::transport::Server::builder()
            .add_service(AuditServer::new(Svc(fake.clone())))
            .add_service(QueryServer::new(Svc(fake.clone())))
            .add_service(ProofsServer::new(Svc(fake.clone())))
            .add_service(CheckpointsServer::new(Svc(fake)))
            .serve_with_incoming(incoming);
        tokio::spawn(server);
        tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    fn proof(&self, index: u64, size: u64) -> Result<Vec<Vec<u8>>, Status> {
        match &self.proofs {
            Proofs::Fixed(p) => {
                let at = self.checkpoint.as_ref().map(|(_, s)| *s);
                match p.get(&index) {
                    Some(h) if at == Some(size) => Ok(h.clone()),
                    _ => Err(Status::unimplemented(format!(
                        "the fake proves only entries of the example in its checkpoint's tree, \
                         not entry {index} in a tree of {size}"
                    ))),
                }
            }
            Proofs::Leaves(leaves) => Ok(LevelTree::new(leaves[..size as usize].to_vec())
                .path(index)
                .iter()
                .map(|h| h.to_vec())
                .collect()),
        }
    }
}

pub fn checkpoint_size(note: &str) -> u64 {
    CheckpointText::parse(&SignedNote::parse(note).unwrap().text)
        .unwrap()
        .size
}

pub fn device_info(id: &str, kind: &str, registered_at_index: u64) -> v1::DeviceInfo {
    v1::DeviceInfo {
        device_id: id.to_string(),
        kind: kind.to_string(),
        registered_at_index,
        ..Default::default()
    }
}

fn event_body(e: &v1::ChainEntry) -> Option<v1::EventBody> {
    if e.kind != v1::RecordKind::Event as i32 {
        return None;
    }
    v1::EventBody::decode(e.body.as_slice()).ok()
}

struct Svc(Arc<Fake>);

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

fn no<T>() -> Result<Response<T>, Status> {
    Err(Status::unimplemented("not served by the fake ledgerd"))
}

#[tonic::async_trait]
impl v1::audit_server::Audit for Svc {
    async fn get_status(
        &self,
        _: Request<v1::AuditStatusRequest>,
    ) -> Result<Response<v1::AuditStatus>, Status> {
        no()
    }
    async fn list_findings(
        &self,
        _: Request<v1::ListFindingsRequest>,
    ) -> Result<Response<v1::ListFindingsResponse>, Status> {
        no()
    }
    async fn review_finding(
        &self,
        _: Request<v1::ReviewFindingRequest>,
    ) -> Result<Response<v1::FindingReview>, Status> {
        no()
    }
    async fn get_finding(
        &self,
        _: Request<v1::GetFindingRequest>,
    ) -> Result<Response<v1::FindingDetail>, Status> {
        no()
    }
    /// As ledgerd (crates/ledgerd/src/audit.rs): NOT_FOUND for a round no table has, the only
    /// table's round when no table is named, INVALID_ARGUMENT when several tables have it.
    async fn get_round(
        &self,
        req: Request<v1::GetRoundRequest>,
    ) -> Result<Response<v1::RoundDetail>, Status> {
        let r = req.into_inner();
        let found: Vec<&v1::RoundDetail> = self
            .0
            .rounds
            .iter()
            .filter(|((table, round), _)| {
                *round == r.round_id && (r.table_id.is_empty() || *table == r.table_id)
            })
            .map(|(_, d)| d)
            .collect();
        match found[..] {
            [d] => Ok(Response::new(d.clone())),
            [] => Err(Status::not_found(format!(
                "no round {} at {}",
                r.round_id,
                if r.table_id.is_empty() {
                    "any table"
                } else {
                    &r.table_id
                }
            ))),
            _ => Err(Status::invalid_argument(format!(
                "round_id: `{}` was played at several tables: name table_id",
                r.round_id
            ))),
        }
    }
    async fn get_report(
        &self,
        _: Request<v1::ReportRequest>,
    ) -> Result<Response<v1::Report>, Status> {
        no()
    }
}

#[tonic::async_trait]
impl v1::query_server::Query for Svc {
    type ListEntriesStream = BoxStream<v1::ChainEntry>;
    type ListDeviceEntriesStream = BoxStream<v1::ChainEntry>;
    type TailStream = BoxStream<v1::ChainEntry>;

    async fn get_head(&self, _: Request<v1::GetHeadRequest>) -> Result<Response<v1::Head>, Status> {
        no()
    }
    async fn get_entry(
        &self,
        _: Request<v1::GetEntryRequest>,
    ) -> Result<Response<v1::ChainEntry>, Status> {
        no()
    }
    async fn list_entries(
        &self,
        _: Request<v1::ListEntriesRequest>,
    ) -> Result<Response<Self::ListEntriesStream>, Status> {
        no()
    }
    /// As ledgerd (crates/ledgerd/src/service.rs): the device's entries from its sequence
    /// `from_sequence` on, in the ledger's order, up to the durable head.
    async fn list_device_entries(
        &self,
        req: Request<v1::ListDeviceEntriesRequest>,
    ) -> Result<Response<Self::ListDeviceEntriesStream>, Status> {
        let r = req.into_inner();
        let items: Vec<Result<v1::ChainEntry, Status>> = self
            .0
            .entries
            .values()
            .filter(|e| e.index < self.0.durable)
            .filter(|e| {
                event_body(e)
                    .is_some_and(|b| b.device_id == r.device_id && b.sequence >= r.from_sequence)
            })
            .cloned()
            .map(Ok)
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(items))))
    }
    async fn tail(
        &self,
        _: Request<v1::TailRequest>,
    ) -> Result<Response<Self::TailStream>, Status> {
        no()
    }
    /// As ledgerd: a device or a principal, or NOT_FOUND.
    async fn get_device(
        &self,
        req: Request<v1::GetDeviceRequest>,
    ) -> Result<Response<v1::DeviceInfo>, Status> {
        let id = req.into_inner().device_id;
        match self.0.devices.get(&id) {
            Some(d) => Ok(Response::new(d.clone())),
            None => Err(Status::not_found(format!("no device or principal {id}"))),
        }
    }
    async fn list_devices(
        &self,
        _: Request<v1::ListDevicesRequest>,
    ) -> Result<Response<v1::DeviceList>, Status> {
        no()
    }
    async fn get_device_history(
        &self,
        _: Request<v1::GetDeviceRequest>,
    ) -> Result<Response<v1::DeviceHistory>, Status> {
        no()
    }
    async fn get_ingest_stats(
        &self,
        _: Request<v1::GetIngestStatsRequest>,
    ) -> Result<Response<v1::IngestStats>, Status> {
        no()
    }
}

#[tonic::async_trait]
impl v1::proofs_server::Proofs for Svc {
    /// As ledgerd (crates/ledgerd/src/proofs.rs): an entry by index, in the tree of the latest
    /// checkpoint (tree_size 0, the checkpoint returned with it) or of the size given.
    async fn get_inclusion_proof(
        &self,
        req: Request<v1::InclusionProofRequest>,
    ) -> Result<Response<v1::InclusionProof>, Status> {
        let f = &self.0;
        let r = req.into_inner();
        let index = match r.entry {
            Some(v1::inclusion_proof_request::Entry::Index(i)) => i,
            _ => return Err(Status::unimplemented("the fake proves entries by index")),
        };
        if index >= f.durable {
            return Err(Status::not_found(format!(
                "entry {index} does not exist (the ledger holds {} durable entries)",
                f.durable
            )));
        }
        let entry = f
            .entries
            .get(&index)
            .ok_or_else(|| Status::data_loss(format!("entry {index} is missing")))?;
        let (size, checkpoint) = if r.tree_size == 0 {
            let (note, size) = f
                .checkpoint
                .clone()
                .ok_or_else(|| Status::failed_precondition("no checkpoint yet"))?;
            (
                size,
                Some(v1::Checkpoint {
                    note,
                    ..Default::default()
                }),
            )
        } else {
            (r.tree_size, None)
        };
        if index >= size {
            return Err(Status::failed_precondition(format!(
                "entry {index} is not in the tree of {size} entries (ask for a later checkpoint)"
            )));
        }
        Ok(Response::new(v1::InclusionProof {
            index,
            tree_size: size,
            entry: (!f.proofs_without_entry).then(|| entry.clone()),
            hashes: f.proof(index, size)?,
            checkpoint,
        }))
    }
    async fn get_consistency_proof(
        &self,
        _: Request<v1::ConsistencyProofRequest>,
    ) -> Result<Response<v1::ConsistencyProof>, Status> {
        no()
    }
}

#[tonic::async_trait]
impl v1::checkpoints_server::Checkpoints for Svc {
    type ListStream = BoxStream<v1::Checkpoint>;

    /// As ledgerd (crates/ledgerd/src/service.rs): the latest checkpoint, or with `cosigned` the
    /// latest one the witnesses cosigned (FAILED_PRECONDITION without witnesses).
    async fn get_latest(
        &self,
        req: Request<v1::GetCheckpointRequest>,
    ) -> Result<Response<v1::Checkpoint>, Status> {
        let note = if req.into_inner().cosigned {
            self.0.cosigned.as_ref().ok_or_else(|| {
                Status::failed_precondition("this ledger has no witnesses configured")
            })?
        } else {
            self.0
                .checkpoint
                .as_ref()
                .ok_or_else(|| Status::not_found("no checkpoint yet"))?
        };
        Ok(Response::new(v1::Checkpoint {
            body: b"a checkpoint body".to_vec(),
            signature: vec![0; 64],
            note: note.0.clone(),
        }))
    }
    async fn create(
        &self,
        _: Request<v1::CreateCheckpointRequest>,
    ) -> Result<Response<v1::Checkpoint>, Status> {
        no()
    }
    async fn list(
        &self,
        _: Request<v1::ListCheckpointsRequest>,
    ) -> Result<Response<Self::ListStream>, Status> {
        no()
    }
}

// ============================================================================ synthetic ledger

/// A key from a fixed seed.
pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// A small ledger written entry by entry with test keys, as ledgerd would chain it.
pub struct Ledger {
    pub id: String,
    pub key: SigningKey,
    pub entries: Vec<v1::ChainEntry>,
    /// Each signer's last sequence.
    sequences: BTreeMap<String, u64>,
    devices: BTreeMap<String, v1::DeviceInfo>,
}

impl Ledger {
    /// A ledger `id` with the ledger key `key(1)`: its genesis, then the principals' declaration
    /// of `operator-1` (key 2).
    pub fn new(id: &str) -> Ledger {
        let mut l = Ledger::empty(id);
        l.genesis(id, &l.key.verifying_key().to_bytes());
        l.declare(&[("operator-1", &key(2))]);
        l
    }

    /// No entry yet (the ledger key is `key(1)`).
    pub fn empty(id: &str) -> Ledger {
        Ledger {
            id: id.to_string(),
            key: key(1),
            entries: Vec::new(),
            sequences: BTreeMap::new(),
            devices: BTreeMap::new(),
        }
    }

    fn push(&mut self, kind: RecordKind, body: Vec<u8>, signature: Vec<u8>) -> u64 {
        let index = self.entries.len() as u64;
        let prev: [u8; 32] = match self.entries.last() {
            Some(e) => e.entry_hash.as_slice().try_into().unwrap(),
            None => [0; 32],
        };
        let e = make_entry(
            &prev,
            index,
            1_800_000_000_000 + index as i64,
            kind,
            body,
            signature,
        );
        self.entries.push(e);
        index
    }

    /// A ledger record signed by the ledger key.
    pub fn record(&mut self, record: Record) -> u64 {
        let body = v1::LedgerRecordBody {
            created_at_ms: 1_800_000_000_000,
            record: Some(record),
        }
        .encode_to_vec();
        let sig = signing::sign(&self.key, LEDGER_RECORD_DOMAIN, &body);
        self.push(RecordKind::Ledger, body, sig.to_bytes().to_vec())
    }

    /// A genesis record (the first entry's, or a forged later one).
    pub fn genesis(&mut self, id: &str, public_key: &[u8]) -> u64 {
        self.record(Record::Genesis(v1::LedgerGenesis {
            ledger_id: id.to_string(),
            ledger_public_key: public_key.to_vec(),
        }))
    }

    pub fn declare(&mut self, principals: &[(&str, &SigningKey)]) -> u64 {
        let at = self.record(Record::PrincipalsDeclared(v1::PrincipalsDeclared {
            principals: principals
                .iter()
                .map(|(id, k)| v1::Principal {
                    id: id.to_string(),
                    role: v1::PrincipalRole::Operator as i32,
                    public_key: k.verifying_key().to_bytes().to_vec(),
                })
                .collect(),
        }));
        for (id, _) in principals {
            self.devices
                .insert(id.to_string(), device_info(id, "operator", at));
        }
        at
    }

    /// An event of `signer` (its next sequence) signed with `key`.
    pub fn event(&mut self, signer: &str, key: &SigningKey, payload: P) -> u64 {
        let seq = self.sequences.entry(signer.to_string()).or_insert(0);
        *seq += 1;
        let body = v1::EventBody {
            device_id: signer.to_string(),
            sequence: *seq,
            occurred_at_ms: 1_800_000_000_000,
            payload: Some(payload),
        }
        .encode_to_vec();
        let sig = signing::sign(key, EVENT_DOMAIN, &body);
        self.push(RecordKind::Event, body, sig.to_bytes().to_vec())
    }

    /// `by` registers table device `device` with `key`.
    pub fn register(
        &mut self,
        by: &str,
        by_key: &SigningKey,
        device: &str,
        key: &SigningKey,
    ) -> u64 {
        let at = self.event(
            by,
            by_key,
            P::DeviceRegistered(v1::DeviceRegistered {
                device_id: device.to_string(),
                public_key: key.verifying_key().to_bytes().to_vec(),
                kind: v1::DeviceKind::Table as i32,
                ..Default::default()
            }),
        );
        self.devices
            .insert(device.to_string(), device_info(device, "table", at));
        at
    }

    /// `by` rotates `device`'s key to `key`.
    pub fn rotate(&mut self, by: &str, by_key: &SigningKey, device: &str, key: &SigningKey) -> u64 {
        self.event(
            by,
            by_key,
            P::DeviceKeyRotated(v1::DeviceKeyRotated {
                device_id: device.to_string(),
                public_key: key.verifying_key().to_bytes().to_vec(),
                reason: "terminal replaced".into(),
            }),
        )
    }

    /// An ordinary event of `device` (a meter reading).
    pub fn reading(&mut self, device: &str, key: &SigningKey) -> u64 {
        self.event(
            device,
            key,
            P::MeterReading(v1::MeterReading {
                machine_id: device.to_string(),
                meters: Vec::new(),
            }),
        )
    }

    pub fn leaves(&self) -> Vec<TreeHash> {
        self.entries
            .iter()
            .map(|e| merkle::leaf_hash(&e.encode_to_vec()))
            .collect()
    }

    /// The checkpoint note of the tree of the first `size` entries, signed with the ledger key
    /// under `origin` (the ledger's own: `casino-ledger/<id>`).
    pub fn note_as(&self, origin: &str, size: u64) -> String {
        let text = CheckpointText {
            origin: origin.to_string(),
            size,
            root: LevelTree::new(self.leaves()[..size as usize].to_vec()).root(),
            chain_head: Some(
                self.entries[size as usize - 1]
                    .entry_hash
                    .as_slice()
                    .try_into()
                    .unwrap(),
            ),
        }
        .text();
        SignedNote::sign(&text, origin, &self.key).unwrap().encode()
    }

    pub fn note(&self, size: u64) -> String {
        self.note_as(&ledger_core::note::origin_of(&self.id), size)
    }

    /// A fake ledgerd serving this ledger, its latest checkpoint of every entry.
    pub fn fake(&self) -> Fake {
        let size = self.entries.len() as u64;
        Fake {
            entries: self.entries.iter().map(|e| (e.index, e.clone())).collect(),
            durable: size,
            checkpoint: Some((self.note(size), size)),
            cosigned: None,
            proofs: Proofs::Leaves(self.leaves()),
            devices: self.devices.clone(),
            rounds: Vec::new(),
            proofs_without_entry: false,
        }
    }

    /// A device bundle of `device`'s events `from..=to` made by hand from `items` (index, role),
    /// proven in the tree of every entry under the checkpoint `note`.
    pub fn device_bundle(
        &self,
        note: &str,
        device: &str,
        from: u64,
        to: u64,
        items: &[(u64, &str)],
    ) -> serde_json::Value {
        let size = checkpoint_size(note);
        let tree = LevelTree::new(self.leaves()[..size as usize].to_vec());
        let entries: Vec<serde_json::Value> = items
            .iter()
            .map(|&(i, role)| {
                serde_json::json!({
                    "index": i,
                    "role": role,
                    "entry": B64.encode(self.entries[i as usize].encode_to_vec()),
                    "proof": tree.path(i).iter().map(|h| B64.encode(h)).collect::<Vec<_>>(),
                })
            })
            .collect();
        serde_json::json!({
            "format": ledger_evidence::FORMAT,
            "kind": "device",
            "device_id": device,
            "from_sequence": from,
            "to_sequence": to,
            "checkpoint": note,
            "entries": entries,
        })
    }
}
