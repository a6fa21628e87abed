//! Faults: the relay killed mid-upload, a party killed mid-round, a full disk, the database
//! away. Each ends with nothing partial visible and, where the round can go on, the local
//! commands' bytes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::postgres::Cluster;
use crate::{
    Relay, eventually, finish, invitation, local_round, lockstep, make_request, parties,
    round_args, same_bytes, spawn, stderr, strings,
};

/// The joiner's request for the shared inputs, made locally.
fn request_bytes(dir: &std::path::Path) -> Vec<u8> {
    make_request(dir, "joiner.txt", "req-alone.pb", false)
}

/// Starts an upload of `body` as round `round`'s request and sends half of it; returns once
/// the relay has staged it.
fn half_upload(relay: &Relay, round: &str, token: &str, body: &[u8]) -> TcpStream {
    let addr = relay.url.trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "PUT /v1/rounds/{round}/request HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body[..body.len() / 2]).unwrap();
    stream.flush().unwrap();
    eventually("the upload to be staged", || relay.staged() == 1);
    stream
}

#[test]
fn the_relay_killed_mid_upload_shows_nothing_partial_and_the_round_completes() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let mut relay = Relay::sqlite(dir, &[]);
    let (starter_inv, joiner_inv) = relay.invite(dir, "killed", &[]);
    let (round, token) = invitation(&joiner_inv);
    let body = request_bytes(dir);
    // Half a request's body, then the relay dies.
    let stream = half_upload(&relay, &round, &token, &body);
    relay.kill();
    drop(stream);
    relay.restart();
    assert_eq!(relay.staged(), 0, "a restart removes what was staged");
    assert_eq!(relay.objects(), 0);
    let (status, view) = relay.get(&format!("/v1/rounds/{round}"), Some(&token));
    assert_eq!(status, 200, "{view}");
    assert!(
        view.contains("\"messages\":{}"),
        "no partial message: {view}"
    );

    let joiner = spawn(
        dir,
        &[
            round_args(&relay, "joiner", &joiner_inv, "j"),
            strings(&["--out", "matches.csv"]),
        ]
        .concat(),
    );
    let starter = spawn(dir, &round_args(&relay, "starter", &starter_inv, "s"));
    finish(starter, "starter");
    finish(joiner, "joiner");
    let local = local_round(dir, "killed", "raw", false);
    same_bytes(&local, &dir.join("s"), &dir.join("j"));
    assert_eq!(
        std::fs::read(dir.join("matches.csv")).unwrap(),
        std::fs::read(local.join("matches.csv")).unwrap()
    );
}

#[test]
fn a_shutdown_lets_an_upload_in_flight_finish() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let mut relay = Relay::sqlite(dir, &[]);
    let (_, joiner_inv) = relay.invite(dir, "drain", &[]);
    let (round, token) = invitation(&joiner_inv);
    let body = request_bytes(dir);
    let mut stream = half_upload(&relay, &round, &token, &body);
    let finishing = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        stream.write_all(&body[body.len() / 2..]).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    });
    assert!(
        relay.terminate(),
        "the relay exits cleanly: {}",
        relay.log()
    );
    let answer = finishing.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert_eq!(relay.objects(), 1);
    assert!(relay.log().contains("shutting down: draining requests"));
}

#[test]
fn a_party_killed_mid_round_resumes_from_its_folder_and_the_relay() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let mut relay = Relay::sqlite(dir, &[]);
    let (starter_inv, joiner_inv) = relay.invite(dir, "resume", &["--format", "gcs"]);
    let (round, token) = invitation(&joiner_inv);
    let joiner_args = [
        round_args(&relay, "joiner", &joiner_inv, "j"),
        strings(&["--out", "matches.csv"]),
    ]
    .concat();
    // The joiner posts its request and waits; it is killed while waiting.
    let mut joiner = spawn(dir, &joiner_args);
    eventually("the request to be posted", || {
        relay
            .get(&format!("/v1/rounds/{round}"), Some(&token))
            .1
            .contains("\"request\"")
    });
    joiner.kill().unwrap();
    joiner.wait().unwrap();
    // The starter runs while the joiner is away, and the relay restarts meanwhile.
    finish(
        spawn(dir, &round_args(&relay, "starter", &starter_inv, "s")),
        "starter",
    );
    relay.restart();
    // A download the killed joiner had begun: the first part of the setup, to be resumed.
    let setup = std::fs::read(dir.join("s/setup.pb")).unwrap();
    std::fs::write(dir.join("j/setup.pb.part"), &setup[..setup.len() / 3]).unwrap();
    let out = finish(spawn(dir, &joiner_args), "the joiner again");
    drop(out);
    let local = local_round(dir, "resume", "gcs", false);
    same_bytes(&local, &dir.join("s"), &dir.join("j"));
    assert_eq!(
        std::fs::read(dir.join("matches.csv")).unwrap(),
        std::fs::read(local.join("matches.csv")).unwrap()
    );
    assert!(!dir.join("j/setup.pb.part").exists());
    assert!(
        relay.log().contains("\"status\":206"),
        "the setup's download was resumed with a range"
    );
}

#[test]
fn a_full_disk_during_an_upload_is_a_clear_error_and_stores_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    // Writes past 200 KiB fail (EFBIG, as ENOSPC would) for the relay: its database stays
    // below that, a 10,000-value request (350 kB) does not.
    let db = format!("sqlite:{}", dir.join("relay.db").display());
    let relay = Relay::start(dir, &db, &[], Some("ulimit -f 400"));
    let (_, joiner_inv) = relay.invite(dir, "full", &[]);
    let (round, token) = invitation(&joiner_inv);
    let values: String = (0..10_000).map(|i| format!("big-{i}\n")).collect();
    std::fs::write(dir.join("big.txt"), values).unwrap();
    let out = lockstep(
        dir,
        &strings(&[
            "psi",
            "request",
            "--key",
            "joiner.key",
            "--input",
            "big.txt",
            "--out",
            "big.pb",
            "--quiet",
        ]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let body = std::fs::read(dir.join("big.pb")).unwrap();
    assert!(body.len() > 300_000);
    let (status, answer) = relay.put(&format!("/v1/rounds/{round}/request"), &token, body);
    assert_eq!(status, 507, "{answer}");
    assert!(answer.contains("\"code\":\"storage\""), "{answer}");
    assert!(answer.contains("full; nothing was stored"), "{answer}");
    assert_eq!(relay.staged(), 0);
    assert_eq!(relay.objects(), 0);
    let (_, view) = relay.get(&format!("/v1/rounds/{round}"), Some(&token));
    assert!(view.contains("\"messages\":{}"), "{view}");
    // A message that fits is still taken.
    let small = request_bytes(dir);
    let (status, answer) = relay.put(&format!("/v1/rounds/{round}/request"), &token, small);
    assert_eq!(status, 201, "{answer}");
}

#[test]
fn the_database_away_fails_requests_clearly_and_they_recover_when_it_returns() {
    let cluster = Cluster::start();
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let relay = Relay::start(dir, &cluster.url(), &[], None);
    let (_, joiner_inv) = relay.invite(dir, "away", &[]);
    let (round, token) = invitation(&joiner_inv);
    let path = format!("/v1/rounds/{round}");
    assert_eq!(relay.get("/healthz", None).0, 200);
    cluster.down();
    let (status, answer) = relay.get(&path, Some(&token));
    assert_eq!(status, 503, "{answer}");
    assert!(answer.contains("\"code\":\"unavailable\""), "{answer}");
    assert_eq!(relay.get("/healthz", None).0, 503);
    let (status, _) = relay.put(&format!("{path}/request"), &token, request_bytes(dir));
    assert_eq!(status, 503);
    assert_eq!(relay.staged(), 0);
    cluster.up();
    eventually("the relay to reach its database again", || {
        relay.get("/healthz", None).0 == 200
    });
    let (status, answer) = relay.get(&path, Some(&token));
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = relay.put(&format!("{path}/request"), &token, request_bytes(dir));
    assert_eq!(status, 201, "{answer}");
    // The client rides out a short outage on its own: it retries 503s.
    cluster.down();
    let restarted = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        cluster.up();
        cluster
    });
    let starter_inv = dir.join("away.starter");
    let out = lockstep(
        dir,
        &[
            round_args(&relay, "starter", &starter_inv, "s"),
            strings(&["--retry-for", "60"]),
        ]
        .concat(),
    );
    let _cluster = restarted.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut log = String::new();
    std::fs::File::open(dir.join("relay.log"))
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(
        log.contains("\"code\":\"unavailable\""),
        "refusals are logged"
    );
}
