//! `lockstep-bench serve`'s ceremony part: many queued participants polling their turn at once
//! (a closed loop: each asks again as soon as it is answered, the most a queue can ask); one
//! contribution accepted with nobody polling, beside the same read and verification run here;
//! and the next one accepted while the others poll.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use lockstep_ceremony::phase1::{self, Phase1, Secrets};
use lockstep_ceremony::{GRAIN, Limits};
use lockstep_server::ceremony::wire::{CeremonyCreated, NewCeremony, TurnView};
use lockstep_shard::{Control, Pool};

/// What one database's ceremony run measured.
pub(super) struct QueueFigures {
    /// Polls answered while only the queue was asking.
    pub(super) polls: usize,
    /// Their latencies.
    pub(super) latencies: Vec<Duration>,
    /// How long the pollers ran alone.
    pub(super) wall: Duration,
    /// This process's CPU time over that span (the relay's and the pollers').
    pub(super) cpu: Duration,
    /// The contribution's bytes.
    pub(super) contribution_len: usize,
    /// The upload's request with nobody polling, from its first byte to the server's verdict
    /// (the body over loopback, the server's read and verification, the store, the head moved).
    pub(super) accept: Duration,
    /// The next participant's, while the others poll.
    pub(super) accept_loaded: Duration,
    /// The server's own verification time, as the transcript lists it.
    pub(super) server_verify: Duration,
    /// The same read of both files and verification, run here on the same worker count.
    pub(super) local_verify: Duration,
    /// The latencies of polls answered during the loaded turn.
    pub(super) during: Vec<Duration>,
}

/// This process's user and system CPU time (Linux's `/proc/self/stat`, in clock ticks of 1/100 s).
fn cpu_time() -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let after = stat
        .rsplit_once(')')
        .context("/proc/self/stat without its command")?
        .1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| -> anyhow::Result<u64> {
        Ok(fields
            .get(i)
            .context("/proc/self/stat too short")?
            .parse()?)
    };
    // utime and stime are the 14th and 15th fields; `after` starts at the 3rd.
    Ok(Duration::from_millis((ticks(11)? + ticks(12)?) * 10))
}

/// Runs the queue through the relay at `base`: `pollers` participants queued behind one
/// contributor poll for `poll_for`; then the contributor downloads the head (2^`power`),
/// contributes and uploads alone; then the first poller does while the rest poll.
pub(super) async fn run(
    base: &str,
    operator: &str,
    pollers: usize,
    power: u32,
    poll_for: Duration,
    workers: usize,
) -> anyhow::Result<QueueFigures> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(pollers + 1)
        .build()?;
    let mut names = vec!["contributor".to_owned()];
    names.extend((0..pollers).map(|i| format!("poller-{i:03}")));
    let asked = NewCeremony {
        kind: "phase1".into(),
        power: Some(power),
        title: "bench".into(),
        participants: names,
        open_slots: 0,
        turn_secs: 3600,
    };
    let created: CeremonyCreated = check(
        http.post(format!("{base}/v1/ceremonies"))
            .bearer_auth(operator)
            .json(&asked)
            .send()
            .await?,
    )
    .await?
    .json()
    .await?;
    let id = created.ceremony.clone();
    let tokens: Vec<String> = created
        .invitations
        .iter()
        .map(|i| {
            i.invitation
                .split_once('.')
                .map(|(_, t)| t.to_owned())
                .expect("invariant: the server writes CEREMONY.TOKEN")
        })
        .collect();
    // The contributor first: it holds the turn; the others queue behind it.
    for token in &tokens {
        check(
            http.post(format!("{base}/v1/ceremonies/{id}/queue"))
                .bearer_auth(token)
                .send()
                .await?,
        )
        .await?;
    }
    let pool = Arc::new(Pool::new(workers)?);
    // 1. The queue alone: every poller asks again as soon as it is answered.
    let pollers = Pollers::start(&http, base, &id, &tokens[1..]);
    let (cpu_before, started) = (cpu_time()?, Instant::now());
    tokio::time::sleep(poll_for).await;
    let (wall, cpu) = (started.elapsed(), cpu_time()? - cpu_before);
    let latencies = pollers.stop().await?;
    // 2. The contributor's turn with nobody polling: the server's own cost.
    let alone = contribution(&http, base, &id, &tokens[0], &pool).await?;
    // 3. The next participant's turn (the first poller's) while the others poll.
    let pollers = Pollers::start(&http, base, &id, &tokens[2..]);
    let loaded = contribution(&http, base, &id, &tokens[1], &pool).await?;
    let during = pollers.stop().await?;
    // The server's read of both files and its verification in step 2, run here.
    let local_verify = {
        let (head, made) = (alone.head.clone(), alone.made.clone());
        tokio::task::spawn_blocking(move || -> anyhow::Result<Duration> {
            let control = Control::new();
            let started = Instant::now();
            let (previous, hash) =
                Phase1::read(&pool, &control, head.as_slice(), &Limits::default())?;
            let (next, _) = Phase1::read(&pool, &control, made.as_slice(), &Limits::default())?;
            phase1::verify_contribution(&pool, &control, &previous, &hash, &next)?;
            Ok(started.elapsed())
        })
        .await??
    };
    Ok(QueueFigures {
        polls: latencies.len(),
        latencies,
        wall,
        cpu,
        contribution_len: alone.made.len(),
        accept: alone.accept,
        server_verify: alone.server_verify,
        local_verify,
        accept_loaded: loaded.accept,
        during,
    })
}

/// Queued participants polling their turn in a closed loop until stopped.
struct Pollers {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<anyhow::Result<Vec<Duration>>>>,
}

impl Pollers {
    fn start(http: &reqwest::Client, base: &str, id: &str, tokens: &[String]) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let tasks = tokens
            .iter()
            .map(|token| {
                let (http, token, stop) = (http.clone(), token.clone(), stop.clone());
                let url = format!("{base}/v1/ceremonies/{id}/turn");
                tokio::spawn(async move {
                    let mut times = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        let response = http.get(&url).bearer_auth(&token).send().await?;
                        let view: TurnView = check(response).await?.json().await?;
                        // The first of them takes the turn once the contribution before is in.
                        anyhow::ensure!(
                            matches!(view.status.as_str(), "queued" | "holding"),
                            "a poller is {}",
                            view.status
                        );
                        times.push(started.elapsed());
                    }
                    Ok(times)
                })
            })
            .collect();
        Self { stop, tasks }
    }

    /// Stops them: every poll's latency.
    async fn stop(self) -> anyhow::Result<Vec<Duration>> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for task in self.tasks {
            all.extend(task.await??);
        }
        Ok(all)
    }
}

/// One participant's turn, timed at the upload.
struct Turn {
    head: Vec<u8>,
    made: Vec<u8>,
    accept: Duration,
    server_verify: Duration,
}

/// The holder of `token` downloads the head, contributes here and uploads.
async fn contribution(
    http: &reqwest::Client,
    base: &str,
    id: &str,
    token: &str,
    pool: &Arc<Pool>,
) -> anyhow::Result<Turn> {
    let view: TurnView = check(
        http.get(format!("{base}/v1/ceremonies/{id}/turn"))
            .bearer_auth(token)
            .send()
            .await?,
    )
    .await?
    .json()
    .await?;
    anyhow::ensure!(
        view.status == "holding",
        "the contributor is {}",
        view.status
    );
    let head_file = view.head.context("no head")?;
    let head = check(
        http.get(format!(
            "{base}/v1/ceremonies/{id}/files/{}",
            head_file.digest
        ))
        .send()
        .await?,
    )
    .await?
    .bytes()
    .await?
    .to_vec();
    let made = {
        let (pool, head) = (pool.clone(), head.clone());
        tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<u8>> {
            let control = Control::new();
            let (previous, hash) =
                Phase1::read(&pool, &control, head.as_slice(), &Limits::default())?;
            let next =
                phase1::contribute(&pool, &control, previous, &hash, &Secrets::random(b"bench"))?;
            let mut bytes = Vec::new();
            next.write(&pool, &control, &mut bytes)?;
            Ok(bytes)
        })
        .await??
    };
    let started = Instant::now();
    let answer = check(
        http.put(format!("{base}/v1/ceremonies/{id}/contribution"))
            .bearer_auth(token)
            .header("upload-length", made.len())
            .body(made.clone())
            .send()
            .await?,
    )
    .await?;
    let accept = started.elapsed();
    let accepted: lockstep_server::ceremony::wire::AcceptedView = answer.json().await?;
    Ok(Turn {
        head,
        made,
        accept,
        server_verify: Duration::from_millis(accepted.verify_ms),
    })
}

/// The workers a 2^`power` verification gets here, as the server's pool has them.
pub(super) fn workers_for(power: u32) -> usize {
    lockstep_shard::ShardPolicy::detected().workers_for(1usize << power, GRAIN)
}

/// A success, or its status and words as an error.
async fn check(response: reqwest::Response) -> anyhow::Result<reqwest::Response> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let words = response.text().await.unwrap_or_default();
    anyhow::bail!("{status}: {words}")
}
