//! `lockstep-bench serve`: many rounds at once through one relay, on SQLite and on PostgreSQL
//! side by side in one run: every HTTP request's latency (p50, p99, max), rounds/s, and every
//! round's bytes checked against the engine's. Then a ceremony's queue ([`queue`]): many
//! participants polling their turn, and one contribution's accept time beside the same
//! verification run locally.
//!
//! The parties' crypto is done before the clock starts (each round with its own keys and
//! values, so no two rounds share a body): the figures are the relay's (its checks, store,
//! database and HTTP), not the parties'.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use lockstep_psi::{Backend, Joiner, Key, Mode, ServerSetup, SetupFormat, SetupParams, Starter};
use lockstep_server::wire::{NewRound, RoundCreated};
use lockstep_server::{ServeConfig, Token};
use lockstep_shard::{Control, Pool};

mod queue;

#[path = "../../server/tests/support/postgres.rs"]
#[allow(
    clippy::unwrap_used,
    reason = "the throwaway cluster's helper is test code: a failure there stops the bench"
)]
mod postgres;

/// `lockstep-bench serve`'s flags.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchServeArgs {
    /// Rounds run at once.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub(crate) rounds: usize,
    /// Rows of each party in each round (half shared).
    #[arg(long, default_value_t = 1_000, value_name = "N")]
    pub(crate) rows: usize,
    /// Databases to run on: sqlite, postgres (a throwaway cluster made with Debian's initdb).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "sqlite,postgres",
        value_name = "DB,..."
    )]
    pub(crate) db: Vec<String>,
    /// Ceremony participants polling their turn at once.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub(crate) pollers: usize,
    /// Seconds the pollers run alone before the contribution.
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub(crate) poll_for: u64,
    /// The power of two of the phase 1 contribution accepted while they poll.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub(crate) accept_power: u32,
}

/// One round's messages as the engine makes them, and the joiner's key to check the result.
struct Messages {
    setup: Vec<u8>,
    request: Vec<u8>,
    response: Vec<u8>,
    joiner: Joiner,
}

fn messages(rows: usize, round: usize, pool: &Pool) -> anyhow::Result<Messages> {
    let control = Control::new();
    let starter_values: Vec<String> = (0..rows).map(|i| format!("r{round}-{i}")).collect();
    let joiner_values: Vec<String> = (0..rows)
        .map(|i| format!("r{round}-{}", i + rows / 2))
        .collect();
    let backend = Backend::fastest();
    let starter = Starter::new(&Key::generate()?, Mode::Reveal, backend)?;
    let joiner = Joiner::new(&Key::generate()?, Mode::Reveal, backend)?;
    let params = SetupParams {
        format: SetupFormat::Raw,
        fpr: SetupParams::DEFAULT_FPR,
        joiner_count: rows as u64,
    };
    let setup = starter.setup(pool, &control, &starter_values, &params)?;
    let request = joiner.request(pool, &control, &joiner_values)?;
    let response = starter.respond(pool, &control, &request)?;
    Ok(Messages {
        setup: setup.message.to_bytes()?,
        request: request.to_bytes(),
        response: response.to_bytes(),
        joiner,
    })
}

/// A relay on its own runtime (2 worker threads, as the machine has), stopped on drop.
struct Relay {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
    operator: Token,
    _dir: tempfile::TempDir,
}

impl Relay {
    fn start(db: &str) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let operator = Token::generate()?;
        let mut config = ServeConfig::new(
            "127.0.0.1:0".parse()?,
            if db == "sqlite" {
                format!("sqlite:{}", dir.path().join("relay.db").display())
            } else {
                db.to_owned()
            },
            dir.path().join("store"),
            operator.hash(),
        );
        config.caps.max_rows = 1 << 30;
        // Ceremony steps on the machine's workers, as `lockstep serve` gives them.
        config.workers = queue::workers_for(30);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, bound) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || -> anyhow::Result<()> {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(lockstep_server::serve(
                config,
                async {
                    let _ = stopped.await;
                },
                move |addr, _| {
                    let _ = ready.send(addr);
                },
            ))?;
            Ok(())
        });
        let addr = bound
            .recv_timeout(Duration::from_secs(30))
            .context("the relay did not start")?;
        Ok(Self {
            addr,
            stop: Some(stop),
            thread: Some(thread),
            operator,
            _dir: dir,
        })
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What one database's run measured.
struct Figures {
    wall: Duration,
    latencies: Vec<Duration>,
    downloads: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
}

/// Runs every round at once through the relay at `base`: per round, create; the joiner posts
/// its request; the starter reads it, posts its setup and response; the joiner reads both and
/// closes the round.
async fn load(
    base: String,
    operator: String,
    rounds: &[Arc<Messages>],
    rows: usize,
) -> anyhow::Result<Figures> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(rounds.len())
        .build()?;
    let started = Instant::now();
    let tasks: Vec<_> = rounds
        .iter()
        .map(|m| {
            let (http, base, operator, m) =
                (http.clone(), base.clone(), operator.clone(), m.clone());
            tokio::spawn(async move { one_round(&http, &base, &operator, &m, rows).await })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut downloads = Vec::new();
    for task in tasks {
        let (times, got) = task.await??;
        latencies.extend(times);
        downloads.push(got);
    }
    Ok(Figures {
        wall: started.elapsed(),
        latencies,
        downloads,
    })
}

type Got = (Vec<u8>, Vec<u8>, Vec<u8>);

async fn one_round(
    http: &reqwest::Client,
    base: &str,
    operator: &str,
    m: &Messages,
    rows: usize,
) -> anyhow::Result<(Vec<Duration>, Got)> {
    let mut times = Vec::new();
    let mut timed = async |request: reqwest::RequestBuilder| -> anyhow::Result<Vec<u8>> {
        let started = Instant::now();
        let response = request.send().await?;
        let status = response.status();
        let body = response.bytes().await?.to_vec();
        times.push(started.elapsed());
        anyhow::ensure!(
            status.is_success(),
            "{status}: {}",
            String::from_utf8_lossy(&body)
        );
        Ok(body)
    };
    let ask = NewRound {
        format: "raw".into(),
        size_only: false,
        max_rows: rows as u64,
        max_bytes: NewRound::bytes_for(rows as u64),
        expires_in: 3600,
    };
    let created: RoundCreated = serde_json::from_slice(
        &timed(
            http.post(format!("{base}/v1/rounds"))
                .bearer_auth(operator)
                .json(&ask),
        )
        .await?,
    )?;
    let token = |invitation: &str| {
        invitation
            .split_once('.')
            .map(|(_, t)| t.to_owned())
            .expect("invariant: the relay writes ROUND.TOKEN")
    };
    let (starter, joiner) = (token(&created.starter), token(&created.joiner));
    let url = |kind: &str| format!("{base}/v1/rounds/{}/{kind}", created.round);
    timed(
        http.put(url("request"))
            .bearer_auth(&joiner)
            .body(m.request.clone()),
    )
    .await?;
    let request = timed(http.get(url("request")).bearer_auth(&starter)).await?;
    timed(
        http.put(url("setup"))
            .bearer_auth(&starter)
            .body(m.setup.clone()),
    )
    .await?;
    timed(
        http.put(url("response"))
            .bearer_auth(&starter)
            .body(m.response.clone()),
    )
    .await?;
    let setup = timed(http.get(url("setup")).bearer_auth(&joiner)).await?;
    let response = timed(http.get(url("response")).bearer_auth(&joiner)).await?;
    timed(
        http.delete(format!("{base}/v1/rounds/{}", created.round))
            .bearer_auth(&joiner),
    )
    .await?;
    Ok((times, (setup, request, response)))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Runs the bench and prints the table.
pub(crate) fn run(args: &BenchServeArgs, quiet: bool) -> anyhow::Result<()> {
    let note = |text: &str| {
        if !quiet {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    };
    let rows = args.rows.max(2);
    note(&format!(
        "making {} rounds' messages ({rows} rows a party, each round its own keys)...",
        args.rounds
    ));
    let pool =
        Pool::new(lockstep_shard::ShardPolicy::detected().workers_for(rows, lockstep_psi::GRAIN))?;
    let rounds: Vec<Arc<Messages>> = (0..args.rounds)
        .map(|r| messages(rows, r, &pool).map(Arc::new))
        .collect::<anyhow::Result<_>>()?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "relay load: {} rounds at once, {rows} rows a party (raw setup), 7 requests a round plus its creation, one relay on 2 runtime threads",
        args.rounds
    )?;
    writeln!(
        out,
        "{:<10} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "database", "rounds", "rounds/s", "requests", "p50 ms", "p99 ms", "max ms", "MB moved"
    )?;
    let mut cluster = None;
    for db in &args.db {
        let url = match db.as_str() {
            "sqlite" => "sqlite".to_owned(),
            "postgres" => cluster.get_or_insert_with(postgres::Cluster::start).url(),
            other => anyhow::bail!("--db {other}: sqlite or postgres"),
        };
        note(&format!("{db}: {} rounds at once...", args.rounds));
        let relay = Relay::start(&url)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let figures = runtime.block_on(load(
            format!("http://{}", relay.addr),
            relay.operator.reveal(),
            &rounds,
            rows,
        ))?;
        drop(relay);
        // Every round's bytes are the engine's, and the joiner finds the shared half.
        let mut moved = 0usize;
        for (m, (setup, request, response)) in rounds.iter().zip(&figures.downloads) {
            anyhow::ensure!(
                *setup == m.setup && *request == m.request && *response == m.response,
                "a round's messages came back changed"
            );
            moved += 2 * (setup.len() + request.len() + response.len());
            let setup = ServerSetup::read(setup.as_slice(), lockstep_psi::Limits::NONE)?;
            let response =
                lockstep_psi::Response::read(response.as_slice(), lockstep_psi::Limits::NONE)?;
            let found = m
                .joiner
                .intersect(&pool, &Control::new(), &setup, &response, rows)?;
            anyhow::ensure!(
                found.len() == rows - rows / 2,
                "a round found {} rows",
                found.len()
            );
        }
        let mut sorted = figures.latencies.clone();
        sorted.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
        let per_second = args.rounds as f64 / figures.wall.as_secs_f64();
        #[allow(clippy::cast_precision_loss, reason = "a size for display")]
        let megabytes = moved as f64 / 1e6;
        writeln!(
            out,
            "{:<10} {:>9} {:>10.1} {:>9} {:>9.1} {:>9.1} {:>9.1} {:>8.1}",
            db,
            args.rounds,
            per_second,
            sorted.len(),
            ms(percentile(&sorted, 0.5)),
            ms(percentile(&sorted, 0.99)),
            ms(*sorted.last().context("no requests")?),
            megabytes
        )?;
    }
    writeln!(
        out,
        "every round's setup, request and response came back byte for byte, and each joiner found its {} shared rows",
        rows - rows / 2
    )?;
    queue_table(args, &mut out, &mut cluster, &note)?;
    Ok(())
}

/// The ceremony queue's table: polling cost and latency, and one accept beside the local
/// verification.
fn queue_table(
    args: &BenchServeArgs,
    out: &mut impl Write,
    cluster: &mut Option<postgres::Cluster>,
    note: &impl Fn(&str),
) -> anyhow::Result<()> {
    let workers = queue::workers_for(args.accept_power);
    writeln!(
        out,
        "\nceremony queue: {} participants polling their turn at once (closed loop) for {} s; then a 2^{} phase 1 contribution accepted with nobody polling, and the next while the others poll; relay on 2 runtime threads, ceremony steps and the local verification on {workers} workers",
        args.pollers, args.poll_for, args.accept_power
    )?;
    writeln!(
        out,
        "{:<10} {:>8} {:>9} {:>8} {:>8} {:>11} {:>10} {:>10} {:>10} {:>10} {:>7} {:>11} {:>10}",
        "database",
        "polls",
        "polls/s",
        "p50 ms",
        "p99 ms",
        "CPU us/poll",
        "MB upload",
        "accept s",
        "server s",
        "local s",
        "ratio",
        "polled acc s",
        "p99 during"
    )?;
    for db in &args.db {
        let url = match db.as_str() {
            "sqlite" => "sqlite".to_owned(),
            "postgres" => cluster.get_or_insert_with(postgres::Cluster::start).url(),
            other => anyhow::bail!("--db {other}: sqlite or postgres"),
        };
        note(&format!(
            "{db}: {} pollers and a 2^{} accept...",
            args.pollers, args.accept_power
        ));
        let relay = Relay::start(&url)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let f = runtime.block_on(queue::run(
            &format!("http://{}", relay.addr),
            &relay.operator.reveal(),
            args.pollers,
            args.accept_power,
            Duration::from_secs(args.poll_for.max(1)),
            workers,
        ))?;
        drop(relay);
        let mut sorted = f.latencies.clone();
        sorted.sort();
        let mut during = f.during.clone();
        during.sort();
        anyhow::ensure!(
            !sorted.is_empty() && !during.is_empty(),
            "no polls measured"
        );
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        #[allow(clippy::cast_precision_loss, reason = "rates and sizes for display")]
        let (per_second, cpu_per_poll, megabytes) = (
            f.polls as f64 / f.wall.as_secs_f64(),
            f.cpu.as_secs_f64() * 1e6 / f.polls as f64,
            f.contribution_len as f64 / 1e6,
        );
        writeln!(
            out,
            "{:<10} {:>8} {:>9.0} {:>8.1} {:>8.1} {:>11.0} {:>10.1} {:>10.2} {:>10.2} {:>10.2} {:>7.2} {:>11.2} {:>10.1}",
            db,
            f.polls,
            per_second,
            ms(percentile(&sorted, 0.5)),
            ms(percentile(&sorted, 0.99)),
            cpu_per_poll,
            megabytes,
            f.accept.as_secs_f64(),
            f.server_verify.as_secs_f64(),
            f.local_verify.as_secs_f64(),
            f.accept.as_secs_f64() / f.local_verify.as_secs_f64(),
            f.accept_loaded.as_secs_f64(),
            ms(percentile(&during, 0.99)),
        )?;
    }
    writeln!(
        out,
        "accept s: the upload request from its first byte to the verdict, nobody polling; server s: the server's read and verification (its transcript's figure); local s: the same read and verification here; ratio: accept / local; polled acc s: the next contribution's accept while the others poll (the machine's two cores shared with them); p99 during: their polls' p99 then; CPU us/poll counts the relay's and the pollers' CPU (one process)"
    )?;
    Ok(())
}
