//! A ceremony through `lockstep serve`, run as its people run it: the operator's `ceremony
//! open` and `seal`, participant processes running `ceremony participate`, anyone's
//! `verify-transcript`; gnark's harness verifying the chain; faults (a silent participant, bad
//! uploads, a race for the turn, the server killed mid-accept) and security (tokens, turns,
//! hostile bodies and ids, the logs) over raw HTTP where a participant would misbehave.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lockstep_server::ceremony::wire::{TranscriptView, TurnView, UploadView};

use super::{Relay, http, lockstep, stderr, strings};
use crate::gnark::harness;

/// Runs `lockstep args` in `dir`; it must succeed. Its standard output.
fn ok(dir: &Path, args: &[String]) -> String {
    let out = lockstep(dir, args);
    assert!(
        out.status.success(),
        "lockstep {args:?} failed: {}",
        stderr(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A ceremony opened: its id and its invitations in order.
struct Opened {
    id: String,
    page: String,
    invitations: Vec<PathBuf>,
}

/// `ceremony open` of `kind_args` (`--kind phase1 --power 10`) with participants `names`.
fn open(relay: &Relay, dir: &Path, kind_args: &[&str], names: &[&str], turn: u64) -> Opened {
    let mut args = strings(&[
        "ceremony",
        "open",
        "--server",
        &relay.url,
        "--operator-token",
        &relay.operator().display().to_string(),
        "--title",
        "Test ceremony",
        "--turn",
        &turn.to_string(),
        "--invitations",
        "invitations",
        "-q",
    ]);
    args.extend(strings(kind_args));
    for name in names {
        args.extend(strings(&["--participant", name]));
    }
    let out = ok(dir, &args);
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .to_owned()
    };
    let mut invitations: Vec<PathBuf> = std::fs::read_dir(dir.join("invitations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    invitations.sort();
    Opened {
        id: field("ceremony: "),
        page: field("page: "),
        invitations,
    }
}

/// A `ceremony participate` process for `invitation`, working in `work`.
fn participate(relay: &Relay, dir: &Path, invitation: &Path, work: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(strings(&[
            "ceremony",
            "participate",
            "--server",
            &relay.url,
            "--token",
            &invitation.display().to_string(),
            "--dir",
            work,
            "--poll",
            "1",
            "--entropy",
            work,
        ]))
        .current_dir(dir)
        .env_remove("LOCKSTEP_WORKERS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a participant and returns the contribution hash it printed.
fn hash_of(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "participate failed: {}{}",
        text,
        stderr(&out)
    );
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("contribution hash: "))
        .unwrap_or_else(|| panic!("no hash in {text}"))
        .to_owned()
}

fn transcript(relay: &Relay, id: &str) -> TranscriptView {
    let (status, body) = relay.get(&format!("/v1/ceremonies/{id}/transcript"), None);
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn token_of(invitation: &Path) -> String {
    super::invitation(invitation).1
}

/// A participant's raw HTTP call: status and body.
fn call(relay: &Relay, method: reqwest::Method, path: &str, token: &str) -> (u16, String) {
    let response = http()
        .request(method, format!("{}{path}", relay.url))
        .bearer_auth(token)
        .send()
        .unwrap();
    (response.status().as_u16(), response.text().unwrap())
}

fn turn(relay: &Relay, id: &str, token: &str) -> TurnView {
    let (status, body) = call(
        relay,
        reqwest::Method::GET,
        &format!("/v1/ceremonies/{id}/turn"),
        token,
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn join(relay: &Relay, id: &str, token: &str) -> TurnView {
    let (status, body) = call(
        relay,
        reqwest::Method::POST,
        &format!("/v1/ceremonies/{id}/queue"),
        token,
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Uploads `body` as a contribution declared `length` bytes long: status and body.
fn upload(relay: &Relay, id: &str, token: &str, body: Vec<u8>, length: u64) -> (u16, String) {
    let response = http()
        .put(format!("{}/v1/ceremonies/{id}/contribution", relay.url))
        .bearer_auth(token)
        .header("upload-length", length)
        .body(body)
        .send()
        .unwrap();
    (response.status().as_u16(), response.text().unwrap())
}

/// Waits until `check` holds (polling), for up to a minute.
fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "waited a minute for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn gnark(dir: &Path, args: &[&str]) {
    let out = Command::new(harness())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gnark {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A contribution made locally on `head` (a file in `dir`), written to `out`: its bytes.
fn contribute_locally(dir: &Path, phase: &str, head: &str, out: &str) -> Vec<u8> {
    ok(
        dir,
        &strings(&[
            "ceremony",
            phase,
            "contribute",
            "--in",
            head,
            "--out",
            out,
            "-q",
        ]),
    );
    std::fs::read(dir.join(out)).unwrap()
}

/// Downloads the ceremony's head to `dir/name`.
fn download_head(relay: &Relay, dir: &Path, view: &TurnView, name: &str) {
    let head = view.head.as_ref().unwrap();
    let response = http()
        .get(format!(
            "{}/v1/ceremonies/{}/files/{}",
            relay.url, view.ceremony, head.digest
        ))
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    std::fs::write(dir.join(name), response.bytes().unwrap()).unwrap();
}

#[test]
fn six_participants_contribute_in_turn_and_the_transcript_verifies_here_and_in_gnark() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::sqlite(d, &[]);
    let names = ["ada", "bo", "cy", "dee", "eve <script>", "fay"];
    let opened = open(
        &relay,
        d,
        &["--kind", "phase1", "--power", "10"],
        &names,
        120,
    );
    assert_eq!(opened.invitations.len(), 6);
    // Six processes at once: the queue takes them one at a time, in the order they joined.
    let children: Vec<Child> = opened
        .invitations
        .iter()
        .enumerate()
        .map(|(i, invitation)| participate(&relay, d, invitation, &format!("work{i}")))
        .collect();
    let hashes: Vec<String> = children.into_iter().map(hash_of).collect();
    let t = transcript(&relay, &opened.id);
    assert_eq!(t.contributions.len(), 6);
    for (i, entry) in t.contributions.iter().enumerate() {
        assert_eq!(entry.index, i as u64 + 1);
    }
    let mut listed: Vec<&str> = t
        .contributions
        .iter()
        .map(|e| e.contribution_hash.as_str())
        .collect();
    let mut printed: Vec<&str> = hashes.iter().map(String::as_str).collect();
    listed.sort_unstable();
    printed.sort_unstable();
    assert_eq!(listed, printed, "every participant's hash, and only theirs");
    let mut who: Vec<&str> = t
        .contributions
        .iter()
        .map(|e| e.participant.as_str())
        .collect();
    who.sort_unstable();
    let mut expected = names.to_vec();
    expected.sort_unstable();
    assert_eq!(who, expected);

    // The page lists every contribution, names escaped, without scripts.
    let page_path = opened.page.split_once("127.0.0.1").unwrap().1;
    let page_path = &page_path[page_path.find('/').unwrap()..];
    let (status, page) = relay.get(page_path, None);
    assert_eq!(status, 200);
    for hash in &hashes {
        assert!(page.contains(hash.as_str()));
    }
    assert!(page.contains("eve &lt;script&gt;") && !page.contains("<script"));

    // The seal, verified here from the published files, and equal to a local seal of them.
    let sealed = ok(
        d,
        &strings(&[
            "ceremony",
            "seal",
            "--server",
            &relay.url,
            "--operator-token",
            &relay.operator().display().to_string(),
            "--ceremony",
            &opened.id,
            "--beacon",
            "0123abcd",
        ]),
    );
    assert!(sealed.contains("sealed after 6 contributions"), "{sealed}");
    let verified = ok(
        d,
        &strings(&["ceremony", "verify-transcript", &opened.page, "--dir", "vt"]),
    );
    assert!(
        verified.contains("transcript verified: 6 contribution(s), and the seal"),
        "{verified}"
    );
    ok(
        d,
        &strings(&[
            "ceremony",
            "phase1",
            "seal",
            "--in",
            "vt/06-contribution",
            "--beacon",
            "0123abcd",
            "--out",
            "local.srs",
            "-q",
        ]),
    );
    assert_eq!(
        std::fs::read(d.join("local.srs")).unwrap(),
        std::fs::read(d.join("vt/sealed.srs")).unwrap()
    );
    // gnark verifies the chain from its own initial object, and seals it to the same bytes.
    let chain: Vec<String> = (1..=6).map(|i| format!("vt/{i:02}-contribution")).collect();
    let mut args = vec![
        "verify",
        "-power",
        "10",
        "-sealed",
        "vt/sealed.srs",
        "-beacon",
        "0123abcd",
    ];
    args.extend(chain.iter().map(String::as_str));
    gnark(d, &args);
    // A sealed ceremony takes no one else.
    let (status, body) = call(
        &relay,
        reqwest::Method::POST,
        &format!("/v1/ceremonies/{}/queue", opened.id),
        &token_of(&opened.invitations[0]),
    );
    assert_eq!((status, body.contains("sealed")), (409, true), "{body}");
}

#[test]
fn a_phase2_ceremony_runs_from_a_circuit_to_keys_gnark_derives_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let circuit = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ceremony/tests/fixtures/chain-1000-commit.r1cs");
    std::fs::copy(&circuit, d.join("circuit.r1cs")).unwrap();
    // A sealed phase 1 of 2^11, cut by the server to the circuit's 2^10.
    for args in [
        &[
            "ceremony", "phase1", "new", "--power", "11", "--out", "p0", "-q",
        ][..],
        &[
            "ceremony",
            "phase1",
            "contribute",
            "--in",
            "p0",
            "--out",
            "p1",
            "-q",
        ],
        &[
            "ceremony", "phase1", "seal", "--in", "p1", "--beacon", "ab", "--out", "srs", "-q",
        ],
    ] {
        ok(d, &strings(args));
    }
    let relay = Relay::sqlite(d, &[]);
    let opened = open(
        &relay,
        d,
        &[
            "--kind",
            "phase2",
            "--r1cs",
            "circuit.r1cs",
            "--phase1",
            "srs",
        ],
        &["ann", "ben", "cat"],
        120,
    );
    let t = transcript(&relay, &opened.id);
    assert_eq!((t.phase.as_str(), t.power), ("open", 10));
    // The server's initial object is the one `phase2 new` makes, byte for byte.
    ok(
        d,
        &strings(&[
            "ceremony",
            "phase2",
            "new",
            "--r1cs",
            "circuit.r1cs",
            "--phase1",
            "srs",
            "--out",
            "initial",
            "-q",
        ]),
    );
    let local = lockstep_server::client::file_digest(&d.join("initial")).unwrap();
    assert_eq!(t.initial.as_ref().unwrap().digest, local.to_string());
    let children: Vec<Child> = opened
        .invitations
        .iter()
        .enumerate()
        .map(|(i, invitation)| participate(&relay, d, invitation, &format!("work{i}")))
        .collect();
    for child in children {
        hash_of(child);
    }
    ok(
        d,
        &strings(&[
            "ceremony",
            "seal",
            "--server",
            &relay.url,
            "--operator-token",
            &relay.operator().display().to_string(),
            "--ceremony",
            &opened.id,
            "--beacon",
            "bea0c0",
        ]),
    );
    let verified = ok(
        d,
        &strings(&["ceremony", "verify-transcript", &opened.page, "--dir", "vt"]),
    );
    assert!(
        verified.contains("the published keys are the seal of the chain"),
        "{verified}"
    );
    assert!(
        verified.contains("transcript verified: 3 contribution(s), and the seal"),
        "{verified}"
    );
    // gnark's VerifyPhase2 re-derives the initial object, verifies the chain and seals it to
    // the same keys as the server published.
    gnark(
        d,
        &[
            "p2verify",
            "-r1cs",
            "circuit.r1cs",
            "-srs",
            "srs",
            "-beacon",
            "bea0c0",
            "-pk",
            "gnark.pk",
            "-vk",
            "gnark.vk",
            "vt/01-contribution",
            "vt/02-contribution",
            "vt/03-contribution",
        ],
    );
    assert_eq!(
        std::fs::read(d.join("gnark.pk")).unwrap(),
        std::fs::read(d.join("vt/sealed.pk")).unwrap()
    );
    assert_eq!(
        std::fs::read(d.join("gnark.vk")).unwrap(),
        std::fs::read(d.join("vt/sealed.vk")).unwrap()
    );
}

#[test]
fn a_silent_participant_loses_its_turn_and_its_late_upload_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::sqlite(d, &[]);
    let opened = open(
        &relay,
        d,
        &["--kind", "phase1", "--power", "4"],
        &["quiet", "busy"],
        2,
    );
    let (quiet, busy) = (
        token_of(&opened.invitations[0]),
        token_of(&opened.invitations[1]),
    );
    let first = join(&relay, &opened.id, &quiet);
    assert_eq!((first.status.as_str(), first.ahead), ("holding", Some(0)));
    download_head(&relay, d, &first, "head");
    let late = contribute_locally(d, "phase1", "head", "late");
    // The busy participant waits behind, then gets the turn once the deadline passes.
    let child = participate(&relay, d, &opened.invitations[1], "busy");
    hash_of(child);
    let view = turn(&relay, &opened.id, &quiet);
    assert_eq!(view.status, "lapsed");
    assert!(view.reason.unwrap().contains("deadline passed"));
    let len = late.len() as u64;
    let (status, body) = upload(&relay, &opened.id, &quiet, late, len);
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("not-your-turn"), "{body}");
    assert_eq!(transcript(&relay, &opened.id).contributions.len(), 1);
    let _ = busy;
}

#[test]
fn tampered_stale_truncated_and_oversized_uploads_are_refused_with_the_engines_words() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::sqlite(d, &[]);
    let opened = open(
        &relay,
        d,
        &["--kind", "phase1", "--power", "4"],
        &["first", "tester"],
        600,
    );
    hash_of(participate(&relay, d, &opened.invitations[0], "first"));
    let token = token_of(&opened.invitations[1]);
    let id = opened.id.as_str();
    let view = join(&relay, id, &token);
    download_head(&relay, d, &view, "head");
    let good = contribute_locally(d, "phase1", "head", "good");
    // Each refusal passes the turn and keeps the head; the tester joins again for the next.
    let mut tampered = good.clone();
    let at = tampered.len() / 2;
    tampered[at] ^= 0x01;
    // A stale contribution: made on the initial object, not on the head.
    let (_, initial) = relay.get(&format!("/v1/ceremonies/{id}/transcript"), None);
    let initial: TranscriptView = serde_json::from_str(&initial).unwrap();
    let initial_view = TurnView {
        head: initial.initial.clone(),
        ..view.clone()
    };
    download_head(&relay, d, &initial_view, "initial");
    let stale = contribute_locally(d, "phase1", "initial", "stale");
    let truncated = good[..good.len() - 100].to_vec();
    let cases: [(&str, Vec<u8>, u64, u16, &str); 3] = [
        (
            "tampered",
            tampered.clone(),
            tampered.len() as u64,
            422,
            "invalid",
        ),
        ("stale", stale.clone(), stale.len() as u64, 422, "challenge"),
        (
            "truncated",
            truncated.clone(),
            truncated.len() as u64,
            422,
            "invalid",
        ),
    ];
    for (what, body, length, status, words) in cases {
        let view = join(&relay, id, &token);
        assert_eq!(view.status, "holding", "{what}");
        let (got, answer) = upload(&relay, id, &token, body, length);
        assert_eq!(got, status, "{what}: {answer}");
        assert!(answer.contains(words), "{what}: {answer}");
        let after = turn(&relay, id, &token);
        assert_eq!(after.status, "refused", "{what}");
        assert!(after.reason.is_some(), "{what}");
        assert_eq!(after.head_index, 1, "{what}: the head is kept");
    }
    // Oversized: refused before a byte is read.
    join(&relay, id, &token);
    let (got, answer) = upload(&relay, id, &token, vec![0; 16], good.len() as u64 + 1);
    assert_eq!(got, 413, "{answer}");
    assert!(answer.contains("exactly"), "{answer}");
    // And the good one, resumed in two parts, is accepted.
    join(&relay, id, &token);
    let half = good.len() / 2;
    let response = http()
        .put(format!("{}/v1/ceremonies/{id}/contribution", relay.url))
        .bearer_auth(&token)
        .header("upload-length", good.len())
        .body(good[..half].to_vec())
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    let (status, held) = call(
        &relay,
        reqwest::Method::GET,
        &format!("/v1/ceremonies/{id}/contribution"),
        &token,
    );
    assert_eq!(status, 200);
    let held: UploadView = serde_json::from_str(&held).unwrap();
    assert_eq!(held.received, half as u64);
    let response = http()
        .put(format!("{}/v1/ceremonies/{id}/contribution", relay.url))
        .bearer_auth(&token)
        .header("upload-length", good.len())
        .header("upload-offset", half)
        .body(good[half..].to_vec())
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
    assert_eq!(transcript(&relay, id).contributions.len(), 2);
    // A second upload by one who contributed is refused.
    let (status, body) = upload(&relay, id, &token, good.clone(), good.len() as u64);
    assert_eq!(status, 409, "{body}");
    let (status, body) = call(
        &relay,
        reqwest::Method::POST,
        &format!("/v1/ceremonies/{id}/queue"),
        &token,
    );
    assert_eq!(
        (status, body.contains("already-contributed")),
        (409, true),
        "{body}"
    );
}

#[test]
fn two_participants_racing_for_the_turn_one_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let relay = Relay::sqlite(dir.path(), &[]);
    race(&relay, dir.path());
}

#[test]
fn on_postgresql_racers_get_one_turn_each_and_the_chain_verifies() {
    let cluster = crate::postgres::Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::start(d, &cluster.url(), &[], None);
    let opened = race(&relay, d);
    // Already queued, the eight processes take their turns in the queue's order.
    let children: Vec<Child> = opened
        .invitations
        .iter()
        .enumerate()
        .map(|(i, invitation)| participate(&relay, d, invitation, &format!("work{i}")))
        .collect();
    for child in children {
        hash_of(child);
    }
    assert_eq!(transcript(&relay, &opened.id).contributions.len(), 8);
    let verified = ok(
        d,
        &strings(&["ceremony", "verify-transcript", &opened.page]),
    );
    assert!(
        verified.contains("transcript verified: 8 contribution(s)"),
        "{verified}"
    );
}

/// Eight participants join at once: one holds the turn, the others one place each behind.
fn race(relay: &Relay, d: &Path) -> Opened {
    let names: Vec<String> = (0..8).map(|i| format!("racer{i}")).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let opened = open(
        relay,
        d,
        &["--kind", "phase1", "--power", "3"],
        &name_refs,
        600,
    );
    let tokens: Vec<String> = opened.invitations.iter().map(|p| token_of(p)).collect();
    let views: Vec<TurnView> = std::thread::scope(|s| {
        let handles: Vec<_> = tokens
            .iter()
            .map(|token| s.spawn(|| join(relay, &opened.id, token)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let holders = views.iter().filter(|v| v.status == "holding").count();
    assert_eq!(holders, 1, "{views:?}");
    let mut ahead: Vec<u64> = tokens
        .iter()
        .map(|t| turn(relay, &opened.id, t).ahead.unwrap())
        .collect();
    ahead.sort_unstable();
    assert_eq!(ahead, (0..8).collect::<Vec<u64>>(), "one place each");
    opened
}

#[test]
fn a_server_killed_mid_accept_resumes_to_one_state_and_the_transcript_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut relay = Relay::sqlite(d, &[]);
    // 2^12: a verification long enough to be killed in.
    let opened = open(
        &relay,
        d,
        &["--kind", "phase1", "--power", "12"],
        &["one", "two"],
        600,
    );
    let id = opened.id.clone();
    let token = token_of(&opened.invitations[0]);
    let view = join(&relay, &id, &token);
    download_head(&relay, d, &view, "head");
    let good = contribute_locally(d, "phase1", "head", "good");
    let len = good.len() as u64;
    let url = relay.url.clone();
    let sender = {
        let token = token.clone();
        let id = id.clone();
        std::thread::spawn(move || {
            let _ = http()
                .put(format!("{url}/v1/ceremonies/{id}/contribution"))
                .bearer_auth(token)
                .header("upload-length", len)
                .body(good)
                .send();
        })
    };
    // Killed while the upload is being verified: before the head moves.
    // (A 2^12 verification takes over a second here; the poll comes every 100 ms.)
    let mut seen = String::new();
    wait_for("the verification to start", || {
        let (_, body) = call(
            &relay,
            reqwest::Method::GET,
            &format!("/v1/ceremonies/{id}/contribution"),
            &token,
        );
        seen = body;
        seen.contains("verifying") || seen.contains("contributed")
    });
    relay.kill();
    assert!(
        seen.contains("\"verifying\""),
        "killed during the verification: {seen}"
    );
    sender.join().unwrap();
    let before = transcript_after_restart(&mut relay, &id);
    assert!(before.contributions.len() <= 1);
    // The restarted server finishes the verification it was killed in.
    wait_for("the resumed verification", || {
        transcript(&relay, &id).contributions.len() == 1
    });
    assert_eq!(turn(&relay, &id, &token).status, "contributed");
    // Killed after the head moved: the head and the transcript stay.
    relay.kill();
    let after = transcript_after_restart(&mut relay, &id);
    assert_eq!(after.contributions.len(), 1);
    let verified = ok(
        d,
        &strings(&[
            "ceremony",
            "verify-transcript",
            &format!("{}/ceremonies/{id}", relay.url),
        ]),
    );
    assert!(
        verified.contains("transcript verified: 1 contribution(s)"),
        "{verified}"
    );
    // The second participant goes on from there.
    hash_of(participate(&relay, d, &opened.invitations[1], "two"));
    assert_eq!(transcript(&relay, &id).contributions.len(), 2);
}

/// Starts the killed relay again and reads the transcript.
fn transcript_after_restart(relay: &mut Relay, id: &str) -> TranscriptView {
    relay.restart();
    transcript(relay, id)
}

#[test]
fn tokens_turns_and_hostile_requests_are_refused_and_no_secret_reaches_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::sqlite(d, &[]);
    let a = open(
        &relay,
        d,
        &["--kind", "phase1", "--power", "3"],
        &["a1", "a2"],
        600,
    );
    std::fs::rename(d.join("invitations"), d.join("invitations-a")).unwrap();
    let b = open(
        &relay,
        d,
        &["--kind", "phase1", "--power", "3"],
        &["b1"],
        600,
    );
    let a1 = token_of(
        &d.join("invitations-a")
            .join(a.invitations[0].file_name().unwrap()),
    );
    let a2 = token_of(
        &d.join("invitations-a")
            .join(a.invitations[1].file_name().unwrap()),
    );
    let b1 = token_of(&b.invitations[0]);
    // A token is scoped to its ceremony.
    let (status, _) = call(
        &relay,
        reqwest::Method::POST,
        &format!("/v1/ceremonies/{}/queue", a.id),
        &b1,
    );
    assert_eq!(status, 401);
    // Operator acts need the operator's token.
    let (status, _) = http()
        .post(format!("{}/v1/ceremonies/{}/seal", relay.url, a.id))
        .bearer_auth(&a1)
        .json(&serde_json::json!({"beacon": "ab"}))
        .send()
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 401);
    let (status, _) = http()
        .post(format!("{}/v1/ceremonies", relay.url))
        .bearer_auth(&a1)
        .json(&serde_json::json!({"kind": "phase1", "power": 3, "title": "x", "turn_secs": 5}))
        .send()
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 401);
    // Out of turn: a2 queued behind a1 cannot upload.
    join(&relay, &a.id, &a1);
    let view = join(&relay, &a.id, &a2);
    assert_eq!((view.status.as_str(), view.ahead), ("queued", Some(1)));
    let (status, body) = upload(&relay, &a.id, &a2, vec![1, 2, 3], 3);
    assert_eq!(
        (status, body.contains("not-your-turn")),
        (409, true),
        "{body}"
    );
    // Hostile ids and bodies.
    for path in [
        "/v1/ceremonies/../turn".to_owned(),
        "/v1/ceremonies/%2e%2e/turn".to_owned(),
        format!("/v1/ceremonies/{}/turn", a.id.to_uppercase()),
        format!("/v1/ceremonies/{}/files/..%2f..%2fetc%2fpasswd", a.id),
        format!("/v1/ceremonies/{}/files/{}", a.id, "00".repeat(32)),
        "/ceremonies/nope".to_owned(),
    ] {
        let (status, _) = relay.get(&path, Some(&a1));
        assert!(status == 404 || status == 400, "{path}: {status}");
    }
    let operator = relay.operator_token();
    for (body, expected) in [
        (vec![b'{'; 100_000], 413),
        (b"{\"kind\": \"phase1\"".to_vec(), 400),
        (br#"{"kind":"phase1","power":99,"title":"t","turn_secs":5}"#.to_vec(), 400),
        (br#"{"kind":"phase1","power":3,"title":"t","turn_secs":0}"#.to_vec(), 400),
        (br#"{"kind":"phase1","power":3,"title":"t","turn_secs":5,"participants":["a","a"]}"#.to_vec(), 409),
        (br#"{"kind":"phase1","power":3,"title":"t","turn_secs":5,"participants":["bad\nname"]}"#.to_vec(), 409),
        (br#"{"kind":"groth","title":"t","turn_secs":5}"#.to_vec(), 400),
    ] {
        let response = http()
            .post(format!("{}/v1/ceremonies", relay.url))
            .bearer_auth(&operator)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .unwrap();
        assert_eq!(response.status().as_u16(), expected, "{}", response.text().unwrap());
    }
    // Registration: closed unless the operator opened slots.
    let response = http()
        .post(format!("{}/v1/ceremonies/{}/participants", relay.url, a.id))
        .json(&serde_json::json!({"name": "walk-in"}))
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 409);
    // No token, invitation or operator secret in the logs.
    let log = relay.log();
    for secret in [&a1, &a2, &b1, &operator] {
        assert!(!log.contains(secret.as_str()), "a secret in the log");
    }
}

#[test]
fn open_registration_takes_names_up_to_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::sqlite(d, &[]);
    let mut args = strings(&[
        "ceremony",
        "open",
        "--server",
        &relay.url,
        "--operator-token",
        &relay.operator().display().to_string(),
        "--title",
        "Open",
        "--kind",
        "phase1",
        "--power",
        "3",
        "--open-slots",
        "2",
        "--invitations",
        "none",
        "-q",
    ]);
    let out = ok(d, &args);
    let page = out
        .lines()
        .find_map(|l| l.strip_prefix("page: "))
        .unwrap()
        .to_owned();
    for (name, file) in [("walk in", "w1"), ("walk out", "w2")] {
        args = strings(&["ceremony", "register", &page, "--name", name, "--out", file]);
        ok(d, &args);
    }
    let out = lockstep(
        d,
        &strings(&[
            "ceremony", "register", &page, "--name", "third", "--out", "w3",
        ]),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no more registrations"),
        "{}",
        stderr(&out)
    );
    hash_of(participate(&relay, d, &d.join("w1"), "work-w1"));
    hash_of(participate(&relay, d, &d.join("w2"), "work-w2"));
}

#[test]
fn a_zkey_ceremony_runs_from_a_circom_circuit_to_a_key_snarkjs_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zkey");
    std::fs::copy(fixtures.join("three.r1cs"), d.join("three.r1cs")).unwrap();
    std::fs::copy(fixtures.join("power4-prepared.ptau"), d.join("pot.ptau")).unwrap();
    let relay = Relay::sqlite(d, &[]);
    let opened = open(
        &relay,
        d,
        &[
            "--kind",
            "zkey",
            "--r1cs",
            "three.r1cs",
            "--phase1",
            "pot.ptau",
        ],
        &["ann", "ben", "cat"],
        120,
    );
    let t = transcript(&relay, &opened.id);
    assert_eq!(
        (t.kind.as_str(), t.phase.as_str(), t.power),
        ("zkey", "open", 3)
    );
    // The server's initial key is `zkey new`'s, byte for byte.
    ok(
        d,
        &strings(&[
            "ceremony",
            "zkey",
            "new",
            "three.r1cs",
            "pot.ptau",
            "--out",
            "initial.zkey",
            "-q",
        ]),
    );
    let local = lockstep_server::client::file_digest(&d.join("initial.zkey")).unwrap();
    assert_eq!(t.initial.as_ref().unwrap().digest, local.to_string());
    // A contribution recorded under another name than the holder's is refused, named.
    let token = token_of(&opened.invitations[0]);
    let view = join(&relay, &opened.id, &token);
    download_head(&relay, d, &view, "head0.zkey");
    ok(
        d,
        &strings(&[
            "ceremony",
            "zkey",
            "contribute",
            "--in",
            "head0.zkey",
            "--out",
            "bad.zkey",
            "--name",
            "bob",
            "-q",
        ]),
    );
    let body = std::fs::read(d.join("bad.zkey")).unwrap();
    let len = body.len() as u64;
    let (status, said) = upload(&relay, &opened.id, &token, body, len);
    assert_eq!(status, 422, "{said}");
    // The body is JSON: the quotes around the names are escaped.
    assert!(
        said.contains(r#"recorded under the name \"bob\", not this participant's \"ann\""#),
        "{said}"
    );
    let hashes: Vec<String> = opened
        .invitations
        .iter()
        .skip(1)
        .enumerate()
        .map(|(i, invitation)| participate(&relay, d, invitation, &format!("work{i}")))
        .collect::<Vec<Child>>()
        .into_iter()
        .map(hash_of)
        .collect();
    assert_eq!(hashes.len(), 2);
    ok(
        d,
        &strings(&[
            "ceremony",
            "seal",
            "--server",
            &relay.url,
            "--operator-token",
            &relay.operator().display().to_string(),
            "--ceremony",
            &opened.id,
            "--beacon",
            "bea0c0",
            "--iterations",
            "1024",
        ]),
    );
    let verified = ok(
        d,
        &strings(&["ceremony", "verify-transcript", &opened.page, "--dir", "vt"]),
    );
    assert!(
        verified.contains("the published key and verification key are the seal of the chain"),
        "{verified}"
    );
    assert!(
        verified.contains("transcript verified: 2 contribution(s), and the seal"),
        "{verified}"
    );
    // snarkjs verifies the published key from the circuit and the powers, and lists the
    // participants and the beacon with the hashes the transcript published.
    let snarkjs =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers/node_modules/snarkjs/cli.js");
    assert!(
        snarkjs.exists(),
        "snarkjs is not installed: run scripts/install-peers"
    );
    let out = Command::new("node")
        .arg(&snarkjs)
        .args(["zkey", "verify", "three.r1cs", "pot.ptau", "vt/final.zkey"])
        .current_dir(d)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("ZKey Ok!"), "{said}");
    // The two participants race for the first turn: either order.
    assert!(said.contains("contribution #3 beacon:"), "{said}");
    for name in ["ben", "cat"] {
        assert!(
            said.lines()
                .any(|l| l.contains("contribution #") && l.ends_with(&format!(" {name}:"))),
            "{name} not in {said}"
        );
    }
    let t = transcript(&relay, &opened.id);
    for entry in &t.contributions {
        let hash = &entry.contribution_hash;
        assert!(hashes.contains(hash), "{hash} not printed by a participant");
        // snarkjs prints the 64 bytes in groups of four.
        let first = &hash[..8];
        assert!(said.contains(first), "{first} not in {said}");
    }
}
