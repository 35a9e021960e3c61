//! The `Proofs` service: inclusion and consistency proofs over the ledger's Merkle tree
//! (`ledger_store::Store::{inclusion_proof, consistency_proof}`), for trees the ledger has
//! signed a checkpoint of, or any durable size the caller names.

use ledger_proto::v1::{self, inclusion_proof_request::Entry, proofs_server::Proofs};
use tonic::{Request, Response, Status};

use crate::pipeline::Ledger;
use crate::service::store_err;

pub struct ProofService {
    pub ledger: Ledger,
}

impl ProofService {
    /// The latest checkpoint that has a tree head, and its size.
    fn latest(store: &ledger_store::Store) -> Result<(v1::Checkpoint, u64), Status> {
        match store.latest_checkpoint().map_err(store_err)? {
            Some((cp, info)) => match info.tree {
                Some(t) => Ok((cp, t.size)),
                None => Err(Status::failed_precondition(
                    "the latest checkpoint was signed before the Merkle tree: ask Checkpoints.Create for one",
                )),
            },
            None => Err(Status::failed_precondition(
                "no checkpoint yet: ask Checkpoints.Create for one",
            )),
        }
    }

    fn durable_size(&self) -> u64 {
        self.ledger.durable().borrow().0 + 1
    }

    fn size_arg(&self, name: &str, size: u64) -> Result<(), Status> {
        let durable = self.durable_size();
        if size > durable {
            return Err(Status::out_of_range(format!(
                "{name} {size}: the ledger holds {durable} durable entries"
            )));
        }
        Ok(())
    }
}

fn hashes(h: Vec<ledger_core::merkle::TreeHash>) -> Vec<Vec<u8>> {
    h.into_iter().map(|h| h.to_vec()).collect()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("proof failed: {e}")))?
}

#[tonic::async_trait]
impl Proofs for ProofService {
    async fn get_inclusion_proof(
        &self,
        req: Request<v1::InclusionProofRequest>,
    ) -> Result<Response<v1::InclusionProof>, Status> {
        let caller = crate::access::Caller::of(&req);
        let r = req.into_inner();
        if r.tree_size != 0 {
            self.size_arg("tree_size", r.tree_size)?;
        }
        let durable = self.durable_size();
        let store = self.ledger.store().clone();
        let proof = blocking(move || {
            let index = match r.entry {
                Some(Entry::Index(i)) => i,
                Some(Entry::DeviceSequence(ds)) => {
                    crate::service::id_arg("device_sequence.device_id", &ds.device_id)?;
                    store
                        .index_of(&ds.device_id, ds.sequence)
                        .map_err(store_err)?
                        .ok_or_else(|| {
                            Status::not_found(format!(
                                "{} has no entry with sequence {}",
                                ds.device_id, ds.sequence
                            ))
                        })?
                }
                None => {
                    return Err(Status::invalid_argument(
                        "entry: give index or device_sequence",
                    ));
                }
            };
            if index >= durable {
                return Err(Status::not_found(format!(
                    "entry {index} does not exist (the ledger holds {durable} durable entries)"
                )));
            }
            let entry = store
                .entry(index)
                .map_err(store_err)?
                .ok_or_else(|| Status::data_loss(format!("entry {index} is missing")))?;
            if !caller.casinos.is_empty() && !crate::service::entry_visible(&store, &caller, &entry)? {
                // The same answer as for an entry that does not exist: nothing leaks.
                return Err(Status::not_found(format!(
                    "no entry {index} in the casinos {} may read",
                    caller.name
                )));
            }
            let (size, checkpoint) = if r.tree_size == 0 {
                let (cp, size) = Self::latest(&store)?;
                (size, Some(cp))
            } else {
                (r.tree_size, None)
            };
            if index >= size {
                return Err(Status::failed_precondition(format!(
                    "entry {index} is not in the tree of {size} entries (ask for a later checkpoint)"
                )));
            }
            let h = store.inclusion_proof(index, size).map_err(store_err)?;
            Ok(v1::InclusionProof {
                index,
                tree_size: size,
                entry: Some(entry),
                hashes: hashes(h),
                checkpoint,
            })
        })
        .await?;
        Ok(Response::new(proof))
    }

    async fn get_consistency_proof(
        &self,
        req: Request<v1::ConsistencyProofRequest>,
    ) -> Result<Response<v1::ConsistencyProof>, Status> {
        let r = req.into_inner();
        if r.to_size != 0 {
            self.size_arg("to_size", r.to_size)?;
        }
        let store = self.ledger.store().clone();
        let proof = blocking(move || {
            let (to, checkpoint) = if r.to_size == 0 {
                let (cp, size) = Self::latest(&store)?;
                (size, Some(cp))
            } else {
                (r.to_size, None)
            };
            if r.from_size == 0 || r.from_size > to {
                return Err(Status::invalid_argument(format!(
                    "from_size {}: must be from 1 to the newer tree's size {to}",
                    r.from_size
                )));
            }
            let h = store
                .consistency_proof(r.from_size, to)
                .map_err(store_err)?;
            Ok(v1::ConsistencyProof {
                from_size: r.from_size,
                to_size: to,
                hashes: hashes(h),
                checkpoint,
            })
        })
        .await?;
        Ok(Response::new(proof))
    }
}
