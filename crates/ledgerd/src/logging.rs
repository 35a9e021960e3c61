//! The log on stderr, for ledgerd and ledgerctl: plain text, coloured only when stderr is a
//! terminal (never into a file, journald or a container's log) and `NO_COLOR` is unset, or one
//! JSON object per line (`[log] format = "json"`, tracing-subscriber's `json`). With the `otel`
//! build feature, ledgerd also exports its spans (one per gRPC call) over OTLP/gRPC ([`otel`]).

use std::io::IsTerminal;

use serde::{Deserialize, Serialize};
#[cfg(feature = "otel")]
use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt};

/// `log.format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One line of text per event, coloured on a terminal only.
    #[default]
    Plain,
    /// One JSON object per event: `timestamp`, `level`, `fields` (with `message`), `target`.
    Json,
}

/// Whether to colour: stderr is a terminal and `NO_COLOR` (no-color.org) is unset or empty.
pub fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Install the global subscriber: `filter`, to stderr, in `format`.
pub fn init(filter: tracing_subscriber::EnvFilter, format: LogFormat) {
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Plain => b.with_ansi(colour()).init(),
        LogFormat::Json => b.json().init(),
    }
}

/// Where spans go: `log.otlp_endpoint`, else `OTEL_EXPORTER_OTLP_ENDPOINT`, else nowhere.
pub fn otlp_endpoint(configured: Option<&str>) -> Option<String> {
    configured.map(str::to_string).or_else(|| {
        std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
            .ok()
            .filter(|v| !v.is_empty())
    })
}

/// What exports spans until it is dropped (which sends what is still buffered). Drop it inside
/// the tokio runtime the exporter was made in, before the runtime itself.
pub struct Traces {
    #[cfg(feature = "otel")]
    provider: Option<otel::Provider>,
}

impl Drop for Traces {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some(p) = self.provider.take()
            && let Err(e) = p.shutdown()
        {
            eprintln!("error: the last spans were not exported: {e}");
        }
    }
}

/// ledgerd's log ([`init`]) and, when `otlp` names a collector, its spans to it over OTLP/gRPC.
/// Call it inside a tokio runtime (the exporter's channel lives there). A ledgerd built without
/// the `otel` feature refuses an endpoint, naming where it came from.
pub fn init_with_traces(
    filter: tracing_subscriber::EnvFilter,
    format: LogFormat,
    otlp: Option<String>,
) -> anyhow::Result<Traces> {
    let Some(endpoint) = otlp else {
        init(filter, format);
        return Ok(Traces {
            #[cfg(feature = "otel")]
            provider: None,
        });
    };
    #[cfg(not(feature = "otel"))]
    {
        let _ = (filter, format);
        anyhow::bail!(
            "log.otlp_endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT) = {endpoint:?}, but this ledgerd \
             was built without trace export: build it with `--features otel`, or unset it"
        )
    }
    #[cfg(feature = "otel")]
    {
        let provider = otel::provider(&endpoint)?;
        let layer = otel::layer(&provider);
        let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
        let registry = tracing_subscriber::registry().with(filter).with(layer);
        match format {
            LogFormat::Plain => registry.with(fmt.with_ansi(colour())).init(),
            LogFormat::Json => registry.with(fmt.json()).init(),
        }
        tracing::info!(%endpoint, "exporting spans over OTLP/gRPC");
        Ok(Traces {
            provider: Some(provider),
        })
    }
}

/// OTLP trace export (feature `otel`): opentelemetry's SDK with its batch processor, the OTLP
/// exporter over gRPC on tonic (which ledgerd already links), `tracing-opentelemetry` turning
/// tracing's spans into OpenTelemetry's. The service is named `ledgerd` unless
/// `OTEL_SERVICE_NAME` says otherwise.
#[cfg(feature = "otel")]
pub mod otel {
    use anyhow::Context;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::WithExportConfig;

    pub type Provider = opentelemetry_sdk::trace::SdkTracerProvider;

    /// A tracer provider exporting in batches to the OTLP/gRPC collector at `endpoint`. Inside
    /// a tokio runtime.
    pub fn provider(endpoint: &str) -> anyhow::Result<Provider> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()
            .with_context(|| format!("log.otlp_endpoint {endpoint:?}"))?;
        let name = std::env::var("OTEL_SERVICE_NAME")
            .ok()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "ledgerd".into());
        Ok(Provider::builder()
            .with_batch_exporter(exporter)
            .with_resource(
                opentelemetry_sdk::Resource::builder()
                    .with_service_name(name)
                    .build(),
            )
            .build())
    }

    /// The tracing layer sending spans to `provider`.
    pub fn layer<S>(provider: &Provider) -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        tracing_opentelemetry::layer().with_tracer(provider.tracer("ledgerd"))
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::sync::{Arc, Mutex};
        use tracing_subscriber::layer::SubscriberExt;

        /// Each request's path and body.
        type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

        /// The smallest OTLP/gRPC collector: HTTP/2 on loopback, every request's path and body
        /// kept, answered with an empty ExportTraceServiceResponse and grpc-status 0.
        async fn collector() -> (String, Received) {
            use http_body_util::BodyExt;
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let at = l.local_addr().unwrap();
            let got: Received = Arc::default();
            let kept = got.clone();
            tokio::spawn(async move {
                loop {
                    let Ok((sock, _)) = l.accept().await else {
                        return;
                    };
                    let kept = kept.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(
                            move |req: http::Request<hyper::body::Incoming>| {
                                let kept = kept.clone();
                                async move {
                                    let path = req.uri().path().to_string();
                                    let body = req.into_body().collect().await?.to_bytes();
                                    kept.lock().unwrap().push((path, body.to_vec()));
                                    // One gRPC message of 0 bytes, then the status trailer.
                                    let frames = futures_frames();
                                    let resp = http::Response::builder()
                                        .header("content-type", "application/grpc")
                                        .body(http_body_util::StreamBody::new(frames))
                                        .unwrap();
                                    Ok::<_, hyper::Error>(resp)
                                }
                            },
                        );
                        let _ = hyper::server::conn::http2::Builder::new(
                            hyper_util::rt::TokioExecutor::new(),
                        )
                        .serve_connection(hyper_util::rt::TokioIo::new(sock), service)
                        .await;
                    });
                }
            });
            (format!("http://{at}"), got)
        }

        /// An empty gRPC message and `grpc-status: 0`.
        fn futures_frames() -> tokio_stream::Iter<
            std::vec::IntoIter<Result<hyper::body::Frame<bytes::Bytes>, std::convert::Infallible>>,
        > {
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
            tokio_stream::iter(vec![
                Ok(hyper::body::Frame::data(bytes::Bytes::from_static(&[
                    0, 0, 0, 0, 0,
                ]))),
                Ok(hyper::body::Frame::trailers(trailers)),
            ])
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn spans_arrive_at_an_otlp_collector() {
            let (endpoint, got) = collector().await;
            let provider = provider(&endpoint).unwrap();
            let subscriber = tracing_subscriber::registry().with(layer(&provider));
            tracing::subscriber::with_default(subscriber, || {
                let span = tracing::info_span!("otel_probe_span", entries = 3);
                let _in = span.enter();
                tracing::info!("inside the probe span");
            });
            // shutdown exports what the batch holds; it blocks, so off the runtime's threads.
            tokio::task::spawn_blocking(move || provider.shutdown())
                .await
                .unwrap()
                .unwrap();
            let got = got.lock().unwrap();
            let (path, body) = got.first().expect("an export request");
            assert_eq!(
                path,
                "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
            );
            let has = |s: &[u8]| body.windows(s.len()).any(|w| w == s);
            assert!(has(b"otel_probe_span"), "the span's name");
            assert!(has(b"ledgerd"), "the service's name");
            assert!(has(b"inside the probe span"), "the event, as a span event");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the feature an endpoint is refused, saying how to get it (and nothing is
    /// installed); with none, nothing is asked of the feature.
    #[cfg(not(feature = "otel"))]
    #[test]
    fn without_the_otel_feature_an_endpoint_is_refused_by_name() {
        let filter = tracing_subscriber::EnvFilter::new("info");
        let e = init_with_traces(
            filter,
            LogFormat::Plain,
            Some("http://127.0.0.1:4317".into()),
        )
        .err()
        .expect("refused");
        let e = e.to_string();
        assert!(
            e.starts_with("log.otlp_endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT)")
                && e.contains("--features otel"),
            "{e}"
        );
    }

    #[test]
    fn the_configured_endpoint_comes_before_the_environments() {
        assert_eq!(
            otlp_endpoint(Some("http://a:4317")).as_deref(),
            Some("http://a:4317")
        );
    }
}
