//! `lockstep serve`: parses its flags, reads (or makes) the operator token, sets up the logs
//! and runs `lockstep_server::serve` until SIGINT or SIGTERM. Every rule is the server crate's.

use std::time::Duration;

use anyhow::Context as _;
use lockstep_files::{Files, SecretFile, read_secret};
use lockstep_server::{Caps, Listen, ServeConfig, Token};

use crate::args::ServeArgs;
use crate::session::Session;

/// An operator token file: 64 hex digits and a newline.
const TOKEN_FILE_LEN: u64 = 65;

/// Reads the token file at `path` (`what`: `operator token`, `invitation`), of exactly `len`
/// bytes and private to its owner.
pub(crate) fn read_token_file(
    path: &std::path::Path,
    what: &str,
    len: u64,
    made_by: &str,
) -> anyhow::Result<zeroize::Zeroizing<String>> {
    let bytes = read_secret(
        path,
        &SecretFile {
            what,
            len,
            made_by,
            allow_open: false,
        },
    )?;
    // The text is the secret too: wiped when dropped, as the bytes it was read into are.
    std::str::from_utf8(&bytes)
        .map(|text| zeroize::Zeroizing::new(text.to_owned()))
        .map_err(|_| anyhow::anyhow!("{}: a {what} file is text", path.display()))
}

/// Writes `text` to a new private file at `path` (mode 0600), staged and renamed.
pub(crate) fn write_secret_file(
    session: &Session,
    flag: &'static str,
    path: &std::path::Path,
    text: &str,
) -> anyhow::Result<()> {
    let mut files = Files::new();
    let id = files.new_output(flag, path);
    let mut staged = session.prepare(&files)?;
    staged.write(id, text.as_bytes())?;
    Ok(staged.commit()?)
}

fn operator_token(args: &ServeArgs, session: &Session) -> anyhow::Result<Token> {
    if std::fs::symlink_metadata(&args.operator_token).is_err() {
        let token = Token::generate()?;
        write_secret_file(
            session,
            "--operator-token",
            &args.operator_token,
            &format!("{}\n", token.reveal()),
        )?;
        tracing::info!(
            file = %args.operator_token.display(),
            "wrote a new operator token (keep it: it creates rounds)"
        );
        return Ok(token);
    }
    let text = read_token_file(
        &args.operator_token,
        "operator token",
        TOKEN_FILE_LEN,
        "`lockstep serve` writes one when the file is missing",
    )?;
    text.parse()
        .with_context(|| format!("operator token {}", args.operator_token.display()))
}

/// Runs the relay until SIGINT or SIGTERM, then drains.
pub(crate) fn run(args: &ServeArgs, session: &Session) -> anyhow::Result<()> {
    // SIGINT and SIGTERM drain the relay (below), rather than end it as a command's would.
    lockstep_files::hand_signals_over();
    // Every line the relay writes on stderr is a log line, from the first.
    let filter = tracing_subscriber::EnvFilter::try_from_env("LOCKSTEP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if args.log_format == "json" {
        logs.json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init();
    } else {
        logs.init();
    }

    let operator = operator_token(args, session)?;
    let listen = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Listen::Tls {
            cert: cert.clone(),
            key: key.clone(),
        },
        _ if args.dev => Listen::Dev {
            cert_out: args.dev_cert.clone(),
        },
        _ => Listen::Plain,
    };
    let mut config = ServeConfig::new(
        args.listen,
        args.db.clone(),
        args.store.clone(),
        operator.hash(),
    );
    drop(operator);
    config.listen = listen.clone();
    config.caps = Caps {
        max_rows: args.max_rows,
        max_bytes: args.max_bytes,
        max_expiry: args.max_expiry,
        ..Caps::default()
    };
    // Ceremony steps run one at a time on the policy's workers (LOCKSTEP_WORKERS, or the
    // machine's).
    config.workers = session.workers(usize::MAX, lockstep_ceremony::GRAIN);
    config.body_idle = Duration::from_secs(args.body_idle);
    config.header_timeout = Duration::from_secs(args.header_timeout);
    config.sweep_every = Duration::from_secs(args.sweep_every.max(1));
    config.drain = Duration::from_secs(args.drain);
    config.allow_origins.clone_from(&args.allow_origin);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the server's runtime")?;
    runtime.block_on(async {
        let shutdown = async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("invariant: SIGTERM can be watched");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        };
        lockstep_server::serve(config, shutdown, |bound, tls| {
            let scheme = if tls { "https" } else { "http" };
            if let Listen::Dev { cert_out } = &listen {
                tracing::info!(
                    file = %cert_out.display(),
                    "a self-signed development certificate for loopback; clients trust it with --ca"
                );
            }
            // The one line a script waits for: where to reach the relay.
            let _ = session.print(&format!("listening on {scheme}://{bound}\n"));
        })
        .await
    })?;
    Ok(())
}
