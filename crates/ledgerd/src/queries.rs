//! The threads that answer the queries which can read much: reports, rounds, findings, the
//! jackpot book's pages, the device registry.
//!
//! One all-time `Audit.GetReport` on a ledger of 24,000 table rounds takes about a third of a
//! second of one core. On tokio's blocking pool any number of them ran at once, at ingest's
//! priority: eight clients asking for reports back to back took both cores, and ingest offered
//! 70,000 events/s fell to 58,000-59,000 with a receipt p99 of 1.3-1.4 s (`ledgerctl bench
//! --report-load 8`, `docs/performance-history.md`). Here they run on `grpc.query_threads`
//! threads of their own (default 1), in turn, at a lower scheduling priority (nice
//! [`QUERY_NICE`]): a query waits for ingest, never the other way round, and when ingest is idle
//! it has the cores.

use std::sync::{Arc, Mutex, mpsc};

use tonic::Status;

/// The query threads' nice value (Linux: per thread). Ingest's threads run at 0.
pub const QUERY_NICE: i32 = 10;

type Job = Box<dyn FnOnce() + Send>;

/// The query threads, and the queue to them.
pub struct QueryPool {
    tx: Mutex<mpsc::Sender<Job>>,
}

impl QueryPool {
    /// Start `threads` query threads (at least one).
    pub fn start(threads: usize) -> std::io::Result<Arc<QueryPool>> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("ledger-query-{i}"))
                .spawn(move || {
                    lower_priority();
                    loop {
                        let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                })?;
        }
        Ok(Arc::new(QueryPool { tx: Mutex::new(tx) }))
    }

    /// Run `f` on a query thread, after the queries queued before it. A panic in `f` is
    /// INTERNAL for this query alone; the thread goes on.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Status> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r);
        });
        self.tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job)
            .map_err(|_| Status::unavailable("the query threads stopped"))?;
        match rx.await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err(Status::internal(
                "the query failed (a bug; ledgerd's log has the details)",
            )),
            Err(_) => Err(Status::unavailable("the query threads stopped")),
        }
    }
}

/// This thread at nice [`QUERY_NICE`] (Linux applies a nice value to the calling thread only).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority on the calling thread (who = 0) with a valid nice value.
        let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, QUERY_NICE) };
        if r != 0 {
            tracing::warn!(
                error = %std::io::Error::last_os_error(),
                "the query thread keeps ingest's priority"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn queries_run_in_turn_on_their_threads_and_a_panic_fails_only_its_own() {
        let pool = QueryPool::start(1).unwrap();
        let name = pool
            .run(|| std::thread::current().name().map(str::to_string))
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("ledger-query-0"));
        #[cfg(target_os = "linux")]
        {
            // SAFETY: getpriority on the calling thread.
            let nice = pool
                .run(|| unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) })
                .await
                .unwrap();
            assert_eq!(nice, QUERY_NICE);
        }
        // One thread: the second query starts after the first ends.
        let order = Arc::new(Mutex::new(Vec::new()));
        let (a, b) = (order.clone(), order.clone());
        let first = pool.run(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            a.lock().unwrap().push(1);
        });
        let second = pool.run(move || b.lock().unwrap().push(2));
        let (x, y) = tokio::join!(first, second);
        x.unwrap();
        y.unwrap();
        assert_eq!(*order.lock().unwrap(), [1, 2]);
        let e = pool.run(|| panic!("a bug")).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Internal);
        assert_eq!(pool.run(|| 7).await.unwrap(), 7);
    }
}
