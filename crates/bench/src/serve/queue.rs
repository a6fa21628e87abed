//! `lockstep-bench serve`'s ceremony part: many queued participants polling their turn at once
//! (a closed loop: each asks again as soon as it is answered, the most a queue can ask), and
//! one contribution accepted while they poll, beside the same read and verification run here.

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
    /// The upload's request, from its first byte to the server's verdict (the body over
    /// loopback, the server's read and verification, the store, the head moved).
    pub(super) accept: Duration,
    /// The server's own verification time, as the transcript lists it.
    pub(super) server_verify: Duration,
    /// The same read of both files and verification, run here on the same worker count.
    pub(super) local_verify: Duration,
    /// Polls answered while the contribution was being accepted, and their latencies.
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
/// contributes and uploads while they go on polling.
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
    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(true));
    let pollers_tasks: Vec<_> = tokens[1..]
        .iter()
        .map(|token| {
            let (http, token, stop, measuring) =
                (http.clone(), token.clone(), stop.clone(), measuring.clone());
            let url = format!("{base}/v1/ceremonies/{id}/turn");
            tokio::spawn(async move {
                let (mut alone_times, mut during) = (Vec::new(), Vec::new());
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let response = http.get(&url).bearer_auth(&token).send().await?;
                    let view: TurnView = check(response).await?.json().await?;
                    // Once the contribution is in, the first poller takes the turn.
                    let alone = measuring.load(Ordering::Relaxed);
                    anyhow::ensure!(
                        view.status == "queued" || (!alone && view.status == "holding"),
                        "a poller is {}",
                        view.status
                    );
                    if alone {
                        alone_times.push(started.elapsed());
                    } else {
                        during.push(started.elapsed());
                    }
                }
                Ok::<_, anyhow::Error>((alone_times, during))
            })
        })
        .collect();
    let (cpu_before, started) = (cpu_time()?, Instant::now());
    tokio::time::sleep(poll_for).await;
    measuring.store(false, Ordering::Relaxed);
    let (wall, cpu) = (started.elapsed(), cpu_time()? - cpu_before);

    // The contributor's turn, with the queue still polling.
    let view: TurnView = check(
        http.get(format!("{base}/v1/ceremonies/{id}/turn"))
            .bearer_auth(&tokens[0])
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
    let head = view.head.context("no head")?;
    let head_bytes = check(
        http.get(format!("{base}/v1/ceremonies/{id}/files/{}", head.digest))
            .send()
            .await?,
    )
    .await?
    .bytes()
    .await?
    .to_vec();
    let pool = Arc::new(Pool::new(workers)?);
    let made = {
        let (pool, head_bytes) = (pool.clone(), head_bytes.clone());
        tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<u8>> {
            let control = Control::new();
            let (previous, hash) =
                Phase1::read(&pool, &control, head_bytes.as_slice(), &Limits::default())?;
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
            .bearer_auth(&tokens[0])
            .header("upload-length", made.len())
            .body(made.clone())
            .send()
            .await?,
    )
    .await?;
    let accept = started.elapsed();
    let accepted: lockstep_server::ceremony::wire::AcceptedView = answer.json().await?;
    stop.store(true, Ordering::Relaxed);
    let (mut latencies, mut during) = (Vec::new(), Vec::new());
    for task in pollers_tasks {
        let (alone, busy) = task.await??;
        latencies.extend(alone);
        during.extend(busy);
    }
    // The server's read of both files and its verification, run here.
    let local_verify = {
        let contribution = made.clone();
        tokio::task::spawn_blocking(move || -> anyhow::Result<Duration> {
            let control = Control::new();
            let started = Instant::now();
            let (previous, hash) =
                Phase1::read(&pool, &control, head_bytes.as_slice(), &Limits::default())?;
            let (next, _) =
                Phase1::read(&pool, &control, contribution.as_slice(), &Limits::default())?;
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
        contribution_len: made.len(),
        accept,
        server_verify: Duration::from_millis(accepted.verify_ms),
        local_verify,
        during,
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
