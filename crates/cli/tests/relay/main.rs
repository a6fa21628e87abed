//! `lockstep serve` with `psi invite` and `psi round`, run as their users run them: a relay
//! process on loopback (plain HTTP on 127.0.0.1, or TLS with --dev), party processes, a
//! throwaway PostgreSQL where named.
//!
//! - `rounds`: a round through the relay writes the local commands' bytes, on SQLite and on
//!   PostgreSQL, in each setup format and mode, over TLS too.
//! - `faults`: the relay killed mid-upload, a party killed mid-round, a full disk, the
//!   database away.
//! - `ceremony`: a trusted-setup ceremony through the relay: participant processes in turn,
//!   the transcript verified here and by gnark's harness, faults and security.
//! - `security`: tokens of other rounds and roles, expiry, replays, oversized and hostile
//!   bodies, slow senders, path-like ids, a burst of bad requests, and the logs scanned.

#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "helpers of tests: a failure is a test failure"
)]

mod ceremony;
mod faults;
#[path = "../support/gnark.rs"]
mod gnark;
mod rounds;
mod security;

#[path = "../../../server/tests/support/postgres.rs"]
mod postgres;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A relay process serving from `dir` (its store and operator token there).
pub(crate) struct Relay {
    child: Option<Child>,
    pub(crate) url: String,
    pub(crate) dir: PathBuf,
    db: String,
    extra: Vec<String>,
    /// A shell line run before the relay (a `ulimit`), if any.
    prefix: Option<String>,
    starts: usize,
}

impl Relay {
    /// A relay on SQLite in `dir`.
    pub(crate) fn sqlite(dir: &Path, extra: &[&str]) -> Self {
        let db = format!("sqlite:{}", dir.join("relay.db").display());
        Self::start(dir, &db, extra, None)
    }

    /// A relay on `db`, with `extra` flags, after the shell line `prefix`.
    pub(crate) fn start(dir: &Path, db: &str, extra: &[&str], prefix: Option<&str>) -> Self {
        let mut relay = Self {
            child: None,
            url: String::new(),
            dir: dir.to_path_buf(),
            db: db.to_owned(),
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
            prefix: prefix.map(str::to_owned),
            starts: 0,
        };
        relay.launch("127.0.0.1:0");
        relay
    }

    fn launch(&mut self, listen: &str) {
        let mut args: Vec<String> = [
            "serve",
            "--listen",
            listen,
            "--db",
            &self.db,
            "--store",
            "store",
            "--operator-token",
            "operator.token",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        if !self.extra.iter().any(|a| a == "--dev") {
            args.push("--plain-http".into());
        }
        args.extend(self.extra.iter().cloned());
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("relay.log"))
            .unwrap();
        let mut command = match &self.prefix {
            None => {
                let mut c = Command::new(env!("CARGO_BIN_EXE_lockstep"));
                c.args(&args);
                c
            }
            Some(prefix) => {
                let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
                let mut c = Command::new("sh");
                c.arg("-c").arg(format!(
                    "trap '' XFSZ; {prefix}; exec {} {}",
                    env!("CARGO_BIN_EXE_lockstep"),
                    quoted.join(" ")
                ));
                c
            }
        };
        let mut child = command
            .current_dir(&self.dir)
            .env_remove("LOCKSTEP_WORKERS")
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the relay did not start: {line:?}; log: {}", self.log()));
        self.url = url.to_owned();
        self.child = Some(child);
        self.starts += 1;
    }

    /// Kills the relay with SIGKILL, as a crash would.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Sends SIGTERM and waits for the relay to exit: whether it exited cleanly.
    pub(crate) fn terminate(&mut self) -> bool {
        let mut child = self.child.take().unwrap();
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        child.wait().unwrap().success()
    }

    /// Starts the relay again on the same address, database and store.
    pub(crate) fn restart(&mut self) {
        self.kill();
        let addr = self.url.split("://").nth(1).unwrap().to_owned();
        self.launch(&addr);
    }

    /// Its log so far (every start's).
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("relay.log")).unwrap_or_default()
    }

    /// The operator token file's path.
    pub(crate) fn operator(&self) -> PathBuf {
        self.dir.join("operator.token")
    }

    /// The operator token's text.
    pub(crate) fn operator_token(&self) -> String {
        std::fs::read_to_string(self.operator())
            .unwrap()
            .trim()
            .to_owned()
    }

    /// The message bodies the store holds.
    pub(crate) fn objects(&self) -> usize {
        count_files(&self.dir.join("store/objects"))
    }

    /// Files left in the store's staging folder.
    pub(crate) fn staged(&self) -> usize {
        count_files(&self.dir.join("store/staging"))
    }

    /// Invites two parties to a round (`extra`: `--format gcs`, `--size-only`, ...), their
    /// invitation files written in `dir` as `NAME.starter` and `NAME.joiner`.
    pub(crate) fn invite(&self, dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
        let starter = dir.join(format!("{name}.starter"));
        let joiner = dir.join(format!("{name}.joiner"));
        let mut args = vec![
            "psi".to_owned(),
            "invite".into(),
            "--server".into(),
            self.url.clone(),
            "--operator-token".into(),
            self.operator().display().to_string(),
            "--starter-out".into(),
            starter.display().to_string(),
            "--joiner-out".into(),
            joiner.display().to_string(),
            "--quiet".into(),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        if !extra.contains(&"--max-rows") {
            args.extend(["--max-rows".to_owned(), "100000".into()]);
        }
        args.extend(self.ca_flags());
        let out = lockstep(dir, &args);
        assert!(out.status.success(), "invite: {}", stderr(&out));
        (starter, joiner)
    }

    /// `--ca FILE` when the relay runs with --dev.
    pub(crate) fn ca_flags(&self) -> Vec<String> {
        if self.extra.iter().any(|a| a == "--dev") {
            vec![
                "--ca".into(),
                self.dir.join("lockstep-dev-cert.pem").display().to_string(),
            ]
        } else {
            Vec::new()
        }
    }

    /// `GET path` with a bearer token (if any): status and body.
    pub(crate) fn get(&self, path: &str, token: Option<&str>) -> (u16, String) {
        let client = http();
        let mut request = client.get(format!("{}{path}", self.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().unwrap();
        (response.status().as_u16(), response.text().unwrap())
    }

    /// `PUT path` with `body` and a bearer token: status and body.
    pub(crate) fn put(&self, path: &str, token: &str, body: Vec<u8>) -> (u16, String) {
        let response = http()
            .put(format!("{}{path}", self.url))
            .bearer_auth(token)
            .body(body)
            .send()
            .unwrap();
        (response.status().as_u16(), response.text().unwrap())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A plain HTTP client for loopback.
pub(crate) fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

fn count_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| {
            let path = e.unwrap().path();
            if path.is_dir() { count_files(&path) } else { 1 }
        })
        .sum()
}

/// An invitation file's round and token.
pub(crate) fn invitation(path: &Path) -> (String, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let (round, token) = text.trim().split_once('.').unwrap();
    (round.to_owned(), token.to_owned())
}

/// Runs `lockstep args` in `dir` to its end.
pub(crate) fn lockstep(dir: &Path, args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .output()
        .unwrap()
}

pub(crate) fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Two parties' inputs and keys in `dir`: `starter.txt` (600 values) and `joiner.txt` (500,
/// 200 shared), `starter.key`, `joiner.key`.
pub(crate) fn parties(dir: &Path) {
    let values = |range: std::ops::Range<u32>| {
        range
            .map(|i| format!("person-{i:05}\n"))
            .collect::<String>()
    };
    std::fs::write(dir.join("starter.txt"), values(0..600)).unwrap();
    std::fs::write(dir.join("joiner.txt"), values(400..900)).unwrap();
    for key in ["starter.key", "joiner.key"] {
        let out = lockstep(dir, &strings(&["psi", "key", "new", "--out", key]));
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

pub(crate) fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

/// A party's `psi round` arguments: `role` with its invitation, key, input and folder `dir`.
pub(crate) fn round_args(
    relay: &Relay,
    role: &str,
    invitation: &Path,
    folder: &str,
) -> Vec<String> {
    let mut args = strings(&[
        "psi",
        "round",
        "--server",
        &relay.url,
        "--role",
        role,
        "--key",
        &format!("{role}.key"),
        "--input",
        &format!("{role}.txt"),
        "--dir",
        folder,
        "--poll",
        "0.1",
        "--quiet",
    ]);
    args.extend(["--token".to_owned(), invitation.display().to_string()]);
    args.extend(relay.ca_flags());
    args
}

/// Starts a party's `psi round` in the background.
pub(crate) fn spawn(dir: &Path, args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (at most a minute) for `child` and requires success.
pub(crate) fn finish(child: Child, what: &str) -> std::process::Output {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{what}: {}", stderr(&out));
    out
}

/// Polls `done` every 50 ms for up to 30 s.
pub(crate) fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `psi request` by the joiner's key over `input` into `out` (in `dir`): its bytes.
pub(crate) fn make_request(dir: &Path, input: &str, out: &str, size_only: bool) -> Vec<u8> {
    let mut args = strings(&[
        "psi",
        "request",
        "--key",
        "joiner.key",
        "--input",
        input,
        "--quiet",
        "--out",
        out,
    ]);
    if size_only {
        args.push("--size-only".into());
    }
    let run = lockstep(dir, &args);
    assert!(run.status.success(), "{args:?}: {}", stderr(&run));
    std::fs::read(dir.join(out)).unwrap()
}

/// The local commands' round in `dir/local-NAME` with the same keys and inputs: its setup,
/// request, response and the joiner's output (`matches.csv`, or the size printed).
pub(crate) fn local_round(dir: &Path, name: &str, format: &str, size_only: bool) -> PathBuf {
    let out = dir.join(format!("local-{name}"));
    std::fs::create_dir_all(&out).unwrap();
    let at = |file: &str| out.join(file).display().to_string();
    let run = |args: Vec<String>| {
        let o = lockstep(dir, &args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    };
    make_request(dir, "joiner.txt", &at("request.pb"), size_only);
    let count = "500";
    let mut setup = strings(&[
        "psi",
        "setup",
        "--key",
        "starter.key",
        "--input",
        "starter.txt",
        "--quiet",
        "--joiner-count",
        count,
        "--format",
        format,
    ]);
    setup.extend(["--out".to_owned(), at("setup.pb")]);
    run(setup);
    let mut respond = strings(&[
        "psi",
        "respond",
        "--key",
        "starter.key",
        "--quiet",
        "--joiner-count",
        count,
    ]);
    respond.extend([
        "--request".to_owned(),
        at("request.pb"),
        "--out".into(),
        at("response.pb"),
    ]);
    if size_only {
        respond.push("--size-only".into());
    }
    run(respond);
    let mut intersect = strings(&[
        "psi",
        "intersect",
        "--key",
        "joiner.key",
        "--input",
        "joiner.txt",
        "--quiet",
    ]);
    intersect.extend([
        "--setup".to_owned(),
        at("setup.pb"),
        "--response".into(),
        at("response.pb"),
        "--request".into(),
        at("request.pb"),
    ]);
    if size_only {
        intersect.push("--size".into());
        let o = run(intersect);
        std::fs::write(out.join("size"), &o.stdout).unwrap();
    } else {
        intersect.extend(["--out".to_owned(), at("matches.csv")]);
        run(intersect);
    }
    out
}

/// Asserts that the folders of a round through the relay hold the local round's bytes.
pub(crate) fn same_bytes(local: &Path, starter: &Path, joiner: &Path) {
    for file in ["setup.pb", "request.pb", "response.pb"] {
        let want = std::fs::read(local.join(file)).unwrap();
        for party in [starter, joiner] {
            assert!(
                std::fs::read(party.join(file)).unwrap() == want,
                "{} differs from the local round's",
                party.join(file).display()
            );
        }
    }
}
