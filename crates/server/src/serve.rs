//! Running the relay: the listener (TLS by rustls, or plain HTTP on loopback only when asked),
//! the database and store opened, bodies no round names collected, the expiry sweep, and a
//! graceful shutdown that lets uploads in flight finish.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use hyper_util::rt::TokioTimer;

use crate::app::{Caps, Relay, router, sweep};
use crate::metrics::Metrics;
use crate::{Db, DbError, DiskStore, Store, StoreError, TokenHash};

/// How the relay listens.
#[derive(Clone, Debug)]
pub enum Listen {
    /// TLS with this certificate chain and private key (PEM files).
    Tls {
        /// The certificate chain.
        cert: PathBuf,
        /// The private key.
        key: PathBuf,
    },
    /// TLS with a self-signed certificate made now for `localhost`, `127.0.0.1` and `::1`
    /// (loopback only), written to `cert_out` for clients to trust.
    Dev {
        /// Where the certificate (not its key) is written.
        cert_out: PathBuf,
    },
    /// Plain HTTP (loopback only).
    Plain,
}

/// Everything `lockstep serve` decides.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The address to listen on (port 0: any free port, reported to `ready`).
    pub addr: SocketAddr,
    /// TLS or not.
    pub listen: Listen,
    /// `sqlite:PATH` or `postgres://...`.
    pub db_url: String,
    /// The store's directory.
    pub store_dir: PathBuf,
    /// The operator token's hash.
    pub operator: TokenHash,
    /// What a round may allow.
    pub caps: Caps,
    /// How long an upload may go without a byte.
    pub body_idle: Duration,
    /// How long a client may take to send a request's headers (and a TLS handshake).
    pub header_timeout: Duration,
    /// How often expired rounds are swept.
    pub sweep_every: Duration,
    /// How long a shutdown waits for requests in flight.
    pub drain: Duration,
    /// Web origins (`https://app.example:8443`) whose pages may call the relay (CORS); none by
    /// default, so no page of another origin can.
    pub allow_origins: Vec<String>,
    /// Worker threads for ceremony steps (verifications, initial objects, seals), one step at a
    /// time; 0 runs them on a blocking thread of their own.
    pub workers: usize,
}

impl ServeConfig {
    /// The defaults of `lockstep serve` for `addr`, the database, store and operator.
    pub fn new(addr: SocketAddr, db_url: String, store_dir: PathBuf, operator: TokenHash) -> Self {
        Self {
            addr,
            listen: Listen::Plain,
            db_url,
            store_dir,
            operator,
            caps: Caps::default(),
            body_idle: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            sweep_every: Duration::from_secs(60),
            drain: Duration::from_secs(30),
            allow_origins: Vec::new(),
            workers: 1,
        }
    }
}

/// Why the relay could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Plain HTTP or a development certificate on an address other than loopback.
    #[error(
        "{0} is not a loopback address: plain HTTP and --dev certificates serve only 127.0.0.1 or ::1; give --tls-cert and --tls-key"
    )]
    NotLoopback(SocketAddr),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An `--allow-origin` that is not a web origin.
    #[error(
        "{0:?} is not a web origin: give scheme://host[:port], as a browser sends it (no path, no trailing slash)"
    )]
    Origin(String),
    /// The certificate or key could not be read or used.
    #[error("TLS: {0}")]
    Tls(String),
    /// Listening failed (the address in use, no permission).
    #[error("could not serve on {addr}: {source}")]
    Io {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}

/// Serves until `shutdown` completes, then stops taking connections and waits up to
/// `config.drain` for requests in flight (uploads included) to finish. `ready` is called once
/// with the bound address and whether it speaks TLS.
///
/// # Errors
/// [`ServeError`]: each names what to fix.
///
/// # Panics
/// Only if a task of its own panics (none does: each returns its errors).
pub async fn serve(
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr, bool) + Send,
) -> Result<(), ServeError> {
    let tls = match &config.listen {
        Listen::Plain => None,
        Listen::Dev { cert_out } => {
            if !config.addr.ip().is_loopback() {
                return Err(ServeError::NotLoopback(config.addr));
            }
            let made = rcgen::generate_simple_self_signed(vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "::1".to_owned(),
            ])
            .map_err(|e| ServeError::Tls(e.to_string()))?;
            let cert = made.cert.pem();
            std::fs::write(cert_out, &cert)
                .map_err(|e| ServeError::Tls(format!("{}: {e}", cert_out.display())))?;
            let key = made.signing_key.serialize_pem();
            Some(
                RustlsConfig::from_pem(cert.into_bytes(), key.into_bytes())
                    .await
                    .map_err(|e| ServeError::Tls(e.to_string()))?,
            )
        }
        Listen::Tls { cert, key } => {
            Some(RustlsConfig::from_pem_file(cert, key).await.map_err(|e| {
                ServeError::Tls(format!("{} / {}: {e}", cert.display(), key.display()))
            })?)
        }
    };
    if matches!(config.listen, Listen::Plain) && !config.addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(config.addr));
    }
    let db = Db::connect(&config.db_url).await?;
    let store = Arc::new(DiskStore::open(&config.store_dir)?);
    let uploads = config.store_dir.join("uploads");
    std::fs::create_dir_all(&uploads).map_err(|source| StoreError::Io {
        action: "create",
        path: uploads.clone(),
        source,
    })?;
    let workers = crate::ceremony::Workers::new(config.workers)
        .map_err(|e| ServeError::Tls(format!("the worker pool: {e}")))?;
    let relay = Arc::new(Relay {
        db,
        store,
        operator: config.operator,
        caps: config.caps,
        metrics: Arc::new(Metrics::default()),
        body_idle: config.body_idle,
        workers: Arc::new(workers),
        uploads,
    });
    collect(&relay).await?;
    crate::ceremony::routes::resume(&relay).await?;
    let sweeper = {
        let relay = relay.clone();
        let every = config.sweep_every;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                // A failed sweep (the database away) is logged and tried again next tick.
                if let Err(e) = sweep(&relay).await {
                    tracing::warn!(error = ?e, "sweep");
                }
            }
        })
    };

    let cors = crate::app::cors(&config.allow_origins).map_err(ServeError::Origin)?;
    let app = crate::trace::layers(router(relay.clone()).layer(cors));
    let handle: Handle<SocketAddr> = Handle::new();
    {
        let handle = handle.clone();
        let drain = config.drain;
        tokio::spawn(async move {
            shutdown.await;
            tracing::info!(
                drain_s = drain.as_secs(),
                "shutting down: draining requests"
            );
            handle.graceful_shutdown(Some(drain));
        });
    }
    let addr = config.addr;
    let io = |source| ServeError::Io { addr, source };
    let service = app.into_make_service();
    let served = {
        let handle = handle.clone();
        let header_timeout = config.header_timeout;
        async move {
            let plain = axum_server::bind(addr).handle(handle);
            match tls {
                Some(tls) => {
                    let acceptor = axum_server::tls_rustls::RustlsAcceptor::new(tls)
                        .handshake_timeout(header_timeout);
                    bounded(plain.acceptor(acceptor), header_timeout)
                        .serve(service)
                        .await
                }
                None => bounded(plain, header_timeout).serve(service).await,
            }
        }
    };
    let is_tls = !matches!(config.listen, Listen::Plain);
    let server = tokio::spawn(served);
    match handle.listening().await {
        Some(bound) => ready(bound, is_tls),
        None => {
            let result = server
                .await
                .expect("invariant: the server task does not panic");
            return result.map_err(io).and(Err(ServeError::Io {
                addr,
                source: std::io::Error::other("the listener stopped before it was ready"),
            }));
        }
    }
    let result = server
        .await
        .expect("invariant: the server task does not panic");
    sweeper.abort();
    tracing::info!("stopped");
    result.map_err(io)
}

/// `server` with a bound on how long a client may take to send a request's headers.
fn bounded<Acc>(
    mut server: axum_server::Server<SocketAddr, Acc>,
    header_timeout: Duration,
) -> axum_server::Server<SocketAddr, Acc> {
    server
        .http_builder()
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    server
}

/// Removes stored bodies no round names (a server killed between storing a body and recording
/// it, or a refused second message); run at start, before any upload.
async fn collect(relay: &Relay) -> Result<(), ServeError> {
    let named = relay.db.named_digests().await?;
    let store = relay.store.clone();
    let collected = tokio::task::spawn_blocking(move || -> Result<u64, StoreError> {
        let mut collected = 0;
        for digest in store.digests()? {
            if !named.contains(&digest) {
                store.remove(&digest)?;
                collected += 1;
            }
        }
        Ok(collected)
    })
    .await
    .expect("invariant: listing files does not panic")?;
    relay
        .metrics
        .add("lockstep_objects_collected_total", String::new(), collected);
    if collected > 0 {
        tracing::info!(collected, "removed stored bodies no round names");
    }
    Ok(())
}
