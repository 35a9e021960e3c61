//! The tree as C2SP tlog-tiles (c2sp.org/tlog-tiles), read-only, on the HTTP listener
//! (`[metrics] listen`) under `/tlog/`: `checkpoint` (the latest checkpoint's signed note, with
//! its witnesses' cosignatures), hash tiles `tile/<L>/<N>[.p/<W>]` and entry bundles
//! `tile/entries/<N>[.p/<W>]` (each entry as stored, after a big-endian `u16` length). Standard
//! transparency-log clients, mirrors and monitors read the ledger with it. Who may read what is
//! in [`crate::access::HTTP_RULES`].
//!
//! A tile is served from the durable entries, whatever the latest checkpoint: its bytes never
//! change once it exists, so every tile is cached as immutable. A tile beyond the durable tree
//! is 404, as the specification asks; so is a bundle holding an entry of more than 65,535 bytes,
//! which its `u16` length cannot carry (the reason is in the body).

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::Full;
use ledger_core::tiles::TilePath;
use ledger_store::{Store, StoreError};

/// The prefix of every tlog-tiles resource.
pub const PREFIX: &str = "/tlog/";

fn with(
    status: StatusCode,
    content_type: &'static str,
    cache: &'static str,
    body: Bytes,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static(cache),
    );
    r
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    with(
        status,
        "text/plain; charset=utf-8",
        "no-store",
        Bytes::from(body),
    )
}

/// The answer to `GET` of `path` (under [`PREFIX`]) from the store whose durable tree holds
/// `size` entries.
pub fn answer(path: &str, store: &Store, size: u64) -> Response<Full<Bytes>> {
    let Some(rest) = path.strip_prefix(PREFIX) else {
        return text(
            StatusCode::NOT_FOUND,
            format!("{path} is not under {PREFIX}\n"),
        );
    };
    if rest == "checkpoint" {
        let latest = store
            .latest_checkpoint()
            .and_then(|l| l.map(|(cp, _)| store.with_cosignatures(cp)).transpose());
        return match latest {
            Ok(Some(cp)) if !cp.note.is_empty() => with(
                StatusCode::OK,
                "text/plain; charset=utf-8",
                "no-cache",
                Bytes::from(cp.note),
            ),
            Ok(_) => text(
                StatusCode::NOT_FOUND,
                "no checkpoint with a tree head yet\n".into(),
            ),
            Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
        };
    }
    let Some(tile) = TilePath::parse(rest) else {
        return text(
            StatusCode::NOT_FOUND,
            format!(
                "{path}: not a tlog-tiles path (checkpoint, tile/<L>/<N>[.p/<W>], tile/entries/<N>[.p/<W>])\n"
            ),
        );
    };
    match store.tile_data(&tile, size) {
        Ok(data) => with(
            StatusCode::OK,
            "application/octet-stream",
            "public, max-age=31536000, immutable",
            Bytes::from(data),
        ),
        Err(StoreError::Refused(why)) => text(StatusCode::NOT_FOUND, format!("{why}\n")),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
    }
}
