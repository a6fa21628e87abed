//! What the relay refuses, with which status, and that nothing refused is stored or logged.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::{Relay, invitation, parties};

/// A request made locally by the joiner (`--size-only` if asked), its bytes.
fn request(dir: &std::path::Path, name: &str, size_only: bool) -> Vec<u8> {
    crate::make_request(dir, "joiner.txt", name, size_only)
}

/// Sends raw bytes and reads the answer until the relay closes or `wait` passes.
fn raw(relay: &Relay, bytes: &[u8], wait: Duration) -> String {
    let addr = relay.url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    // The relay may answer (and hang up) before it has read everything.
    let _ = stream.write_all(bytes);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

fn status_of(answer: &str) -> &str {
    answer.split(' ').nth(1).unwrap_or("")
}

#[test]
fn tokens_roles_expiry_replays_and_hostile_bodies_are_refused_and_nothing_leaks() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let relay = Relay::sqlite(
        dir,
        &[
            "--header-timeout",
            "1",
            "--body-idle",
            "1",
            "--allow-origin",
            "http://app.example:8765",
        ],
    );
    let (a_starter, a_joiner) = relay.invite(dir, "a", &[]);
    let (_, b_joiner) = relay.invite(dir, "b", &[]);
    let (_, small_joiner) = relay.invite(dir, "small", &["--max-rows", "100"]);
    let (round_a, starter_a) = invitation(&a_starter);
    let (_, joiner_a) = invitation(&a_joiner);
    let (round_b, joiner_b) = invitation(&b_joiner);
    let (round_small, joiner_small) = invitation(&small_joiner);
    let operator = relay.operator_token();
    let body = request(dir, "req.pb", false);
    let a = format!("/v1/rounds/{round_a}");
    let b = format!("/v1/rounds/{round_b}");

    // Another round's token, a wrong one, a malformed one, the operator's: one answer.
    let wrong = "0".repeat(64);
    for (path, token) in [
        (&b, joiner_a.as_str()),
        (&a, joiner_b.as_str()),
        (&a, wrong.as_str()),
        (&a, "not-a-token"),
        (&a, operator.as_str()),
    ] {
        let (status, answer) = relay.get(path, Some(token));
        assert_eq!(status, 401, "{answer}");
        assert!(answer.contains("\"code\":\"unauthorized\""), "{answer}");
        let (status, _) = relay.put(&format!("{path}/request"), token, body.clone());
        assert_eq!(status, 401);
    }
    assert_eq!(relay.get(&a, None).0, 401);
    // A party's token does not create rounds.
    let response = crate::http()
        .post(format!("{}/v1/rounds", relay.url))
        .bearer_auth(&joiner_a)
        .body(r#"{"format":"raw","max_rows":10,"max_bytes":1000,"expires_in":60}"#)
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    // A round past the server's caps, or a malformed ask, is refused.
    for ask in [
        r#"{"format":"raw","max_rows":100000000000,"max_bytes":1000,"expires_in":60}"#,
        r#"{"format":"sparse","max_rows":10,"max_bytes":1000,"expires_in":60}"#,
        r#"{"format":"raw","max_rows":10,"max_bytes":1000,"expires_in":0}"#,
        r#"{"format":"raw","max_rows":10}"#,
        "not json",
    ] {
        let response = crate::http()
            .post(format!("{}/v1/rounds", relay.url))
            .bearer_auth(&operator)
            .body(ask)
            .send()
            .unwrap();
        assert_eq!(response.status().as_u16(), 400, "{ask}");
    }

    // Pages: only the allowed origin's may call the relay.
    for (origin, allowed) in [
        ("http://app.example:8765", true),
        ("http://evil.example", false),
    ] {
        let response = crate::http()
            .request(
                reqwest::Method::OPTIONS,
                format!("{}{a}/request", relay.url),
            )
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "PUT")
            .header("Access-Control-Request-Headers", "authorization")
            .send()
            .unwrap();
        let granted = response
            .headers()
            .get("access-control-allow-origin")
            .cloned();
        assert_eq!(granted.is_some(), allowed, "{origin}: {granted:?}");
    }

    // Roles: a joiner posts no setup, a starter no request; each reads only the other's.
    assert_eq!(
        relay.put(&format!("{a}/setup"), &joiner_a, body.clone()).0,
        403
    );
    assert_eq!(
        relay
            .put(&format!("{a}/request"), &starter_a, body.clone())
            .0,
        403
    );
    assert_eq!(relay.get(&format!("{a}/request"), Some(&joiner_a)).0, 403);
    assert_eq!(relay.get(&format!("{a}/setup"), Some(&starter_a)).0, 403);
    let (status, answer) = relay.get(&format!("{a}/setup"), Some(&joiner_a));
    assert_eq!(
        (status, answer.contains("not-yet")),
        (404, true),
        "{answer}"
    );
    // Protocol order: no response before the setup and the request.
    let (status, answer) = relay.put(&format!("{a}/response"), &starter_a, body.clone());
    assert_eq!(status, 409, "{answer}");
    assert!(answer.contains("out-of-order"), "{answer}");

    // Hostile bodies: each decoder error over HTTP, with its words, nothing stored.
    let mut prefix = body.clone();
    prefix[4] = 0x05;
    let mut infinity = body.clone();
    infinity[4] = 0x00;
    let hostile: Vec<(Vec<u8>, &str)> = vec![
        (vec![0xff; 40], "is not valid protobuf"),
        (body[..body.len() - 10].to_vec(), "is not valid protobuf"),
        (prefix, "starts with 0x05"),
        (infinity, "is the point at infinity"),
        (
            vec![0x08, 0x01, 0x12, 0x05, 2, 0, 0, 0, 0],
            "is 5 bytes long, not 33",
        ),
    ];
    for (bytes, words) in &hostile {
        let (status, answer) = relay.put(&format!("{a}/request"), &joiner_a, bytes.clone());
        assert_eq!(status, 422, "{words}: {answer}");
        assert!(answer.contains(words), "{words}: {answer}");
    }
    // Setups: another message's bytes, and one holding no data structure.
    for (bytes, words) in [
        (body.clone(), "this is a request message, not a setup"),
        (Vec::new(), "holds no data structure"),
    ] {
        let (status, answer) = relay.put(&format!("{a}/setup"), &starter_a, bytes);
        assert_eq!(status, 422, "{words}: {answer}");
        assert!(answer.contains(words), "{words}: {answer}");
    }
    // (Whether each point is on the curve is the receiving party's engine's check, which it
    // makes before using a point whatever the relay did: the relay checks shapes, at no
    // per-point cost.)
    // More elements than the round's rows; a size-only request in a revealing round.
    let (status, answer) = relay.put(
        &format!("/v1/rounds/{round_small}/request"),
        &joiner_small,
        body.clone(),
    );
    assert_eq!(status, 422, "{answer}");
    assert!(answer.contains("more than 100 elements"), "{answer}");
    let (status, answer) = relay.put(
        &format!("{a}/request"),
        &joiner_a,
        request(dir, "so.pb", true),
    );
    assert_eq!(status, 422, "{answer}");
    assert!(answer.contains("\"code\":\"mismatch\""), "{answer}");
    // An empty body is no request.
    let (status, answer) = relay.put(&format!("{a}/request"), &joiner_a, Vec::new());
    assert_eq!(status, 422, "{answer}");
    // Oversized, declared or not.
    let big = vec![0u8; 80_000];
    let (status, _) = relay.put(
        &format!("/v1/rounds/{round_small}/request"),
        &joiner_small,
        big,
    );
    assert_eq!(status, 413);
    let chunked = format!(
        "PUT /v1/rounds/{round_small}/request HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {joiner_small}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    let mut stream_body = chunked.into_bytes();
    for _ in 0..20 {
        stream_body.extend_from_slice(b"1000\r\n");
        stream_body.extend(std::iter::repeat_n(0u8, 0x1000));
        stream_body.extend_from_slice(b"\r\n");
    }
    stream_body.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(
        status_of(&raw(&relay, &stream_body, Duration::from_secs(10))),
        "413"
    );
    assert_eq!(relay.objects(), 0, "nothing refused is stored");
    assert_eq!(relay.staged(), 0);

    // A replay: the same bytes again are accepted once; other bytes are refused.
    assert_eq!(
        relay
            .put(&format!("{a}/request"), &joiner_a, body.clone())
            .0,
        201
    );
    let (status, answer) = relay.put(&format!("{a}/request"), &joiner_a, body.clone());
    assert_eq!(status, 200, "{answer}");
    let other = crate::make_request(dir, "starter.txt", "other.pb", false);
    let (status, answer) = relay.put(&format!("{a}/request"), &joiner_a, other);
    assert_eq!(status, 409, "{answer}");
    assert!(answer.contains("already-posted"), "{answer}");
    assert_eq!(relay.objects(), 1);

    // Path-like ids name nothing.
    for path in [
        format!("/v1/rounds/../rounds/{round_a}"),
        "/v1/rounds/%2e%2e/request".to_owned(),
        format!("/v1/rounds/{round_a}/..%2frequest"),
        format!("/v1/rounds/{}/request", round_a.to_uppercase()),
        "/v1/rounds/..%2f..%2fetc%2fpasswd".to_owned(),
    ] {
        let answer = raw(
            &relay,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {joiner_a}\r\nConnection: close\r\n\r\n").as_bytes(),
            Duration::from_secs(5),
        );
        assert!(
            matches!(status_of(&answer), "404" | "400"),
            "{path}: {answer}"
        );
    }

    // Slow senders: headers never finished, a body that stops.
    let started = Instant::now();
    let answer = raw(
        &relay,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
        Duration::from_secs(10),
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the relay hung up on slow headers"
    );
    assert!(answer.is_empty() || status_of(&answer) == "408", "{answer}");
    let started = Instant::now();
    let answer = raw(
        &relay,
        format!("PUT /v1/rounds/{round_b}/request HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {joiner_b}\r\nContent-Length: 5000\r\n\r\n0123456789").as_bytes(),
        Duration::from_secs(10),
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(status_of(&answer), "408", "{answer}");
    assert_eq!(relay.staged(), 0);

    // Expiry.
    let (expired_starter, _) = relay.invite(dir, "short", &["--expires-in", "1"]);
    let (round_short, starter_short) = invitation(&expired_starter);
    std::thread::sleep(Duration::from_millis(1100));
    let (status, answer) = relay.get(&format!("/v1/rounds/{round_short}"), Some(&starter_short));
    assert_eq!(status, 410, "{answer}");

    // A burst of 1,000 bad requests from 8 connections: each refused, the relay still well.
    let started = Instant::now();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let url = relay.url.clone();
            let round = round_b.clone();
            std::thread::spawn(move || {
                let client = crate::http();
                let mut statuses = Vec::new();
                for i in 0..125 {
                    let status = match (w + i) % 4 {
                        0 => client
                            .get(format!("{url}/v1/rounds/{round}"))
                            .bearer_auth("f".repeat(64))
                            .send(),
                        1 => client.get(format!("{url}/v1/rounds/nope/setup")).send(),
                        2 => client
                            .put(format!("{url}/v1/rounds/{round}/setup"))
                            .bearer_auth("0".repeat(64))
                            .body(vec![0u8; 100])
                            .send(),
                        _ => client.post(format!("{url}/v1/rounds")).body("{}").send(),
                    }
                    .unwrap()
                    .status()
                    .as_u16();
                    statuses.push(status);
                }
                statuses
            })
        })
        .collect();
    let statuses: Vec<u16> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert_eq!(statuses.len(), 1000);
    assert!(
        statuses.iter().all(|s| [401, 404].contains(s)),
        "{statuses:?}"
    );
    eprintln!(
        "1,000 bad requests answered in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(relay.get("/healthz", None).0, 200);
    assert_eq!(relay.objects(), 1);
    let (_, metrics) = relay.get("/metrics", None);
    let refused: u64 = metrics
        .lines()
        .filter(|l| l.starts_with("lockstep_refusals_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(refused >= 1000, "{metrics}");

    // The logs: every line JSON, no token, no value of either party.
    let log = relay.log();
    assert!(log.lines().count() > 1000);
    let mut secrets = vec![
        operator.clone(),
        starter_a,
        joiner_a,
        joiner_b,
        joiner_small,
    ];
    for file in [
        "b.starter",
        "small.starter",
        "short.starter",
        "short.joiner",
    ] {
        secrets.push(invitation(&dir.join(file)).1);
    }
    for line in log.lines() {
        assert!(
            line.starts_with('{') && line.ends_with('}'),
            "not JSON: {line}"
        );
        for secret in &secrets {
            assert!(
                !line.contains(secret.as_str()),
                "a token in the log: {line}"
            );
        }
        assert!(!line.contains("person-"), "a value in the log: {line}");
    }
    assert!(log.contains("\"id\":"), "request ids");
}
