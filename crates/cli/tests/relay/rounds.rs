//! A round through the relay writes the local commands' bytes and finds the same rows.

use std::path::Path;

use crate::postgres::Cluster;
use crate::{Relay, finish, local_round, parties, round_args, same_bytes, spawn, strings};

/// Runs rounds of each `(format, size_only)` through `relay` and checks each against the
/// local commands; the relay holds nothing after the joiner closes each round.
fn rounds_match_local(relay: &Relay, dir: &Path, cases: &[(&str, bool)]) {
    for &(format, size_only) in cases {
        let name = format!("{format}{}", if size_only { "-size" } else { "" });
        let mut extra = vec!["--format", format];
        if size_only {
            extra.push("--size-only");
        }
        let (starter_inv, joiner_inv) = relay.invite(dir, &name, &extra);
        let starter_dir = format!("{name}-starter");
        let joiner_dir = format!("{name}-joiner");
        // The joiner first, the starter after: neither waits for the other to be online.
        let mut joiner_args = round_args(relay, "joiner", &joiner_inv, &joiner_dir);
        if !size_only {
            joiner_args.extend(strings(&["--out", &format!("{name}-matches.csv")]));
        }
        let joiner = spawn(dir, &joiner_args);
        let starter = spawn(
            dir,
            &round_args(relay, "starter", &starter_inv, &starter_dir),
        );
        finish(starter, &format!("{name} starter"));
        let joined = finish(joiner, &format!("{name} joiner"));
        let local = local_round(dir, &name, format, size_only);
        same_bytes(&local, &dir.join(&starter_dir), &dir.join(&joiner_dir));
        if size_only {
            assert_eq!(
                joined.stdout,
                std::fs::read(local.join("size")).unwrap(),
                "{name}: the size printed"
            );
            assert_eq!(String::from_utf8_lossy(&joined.stdout).trim(), "200");
        } else {
            let matches = std::fs::read(dir.join(format!("{name}-matches.csv"))).unwrap();
            assert_eq!(
                matches,
                std::fs::read(local.join("matches.csv")).unwrap(),
                "{name}"
            );
            assert_eq!(
                String::from_utf8_lossy(&matches).lines().count(),
                201,
                "{name}"
            );
        }
    }
    assert_eq!(relay.objects(), 0, "closed rounds leave no body");
    assert_eq!(relay.staged(), 0);
}

#[test]
fn a_round_through_the_relay_on_sqlite_gives_the_local_bytes() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let relay = Relay::sqlite(dir, &[]);
    rounds_match_local(
        &relay,
        dir,
        &[
            ("raw", false),
            ("gcs", true),
            ("bloom", false),
            ("raw", true),
        ],
    );
    let (_, metrics) = relay.get("/metrics", None);
    assert!(
        metrics.contains("lockstep_rounds_created_total 4\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("lockstep_uploads_total{kind=\"setup\",outcome=\"new\"} 4\n"),
        "{metrics}"
    );
}

#[test]
fn a_round_through_the_relay_on_postgresql_gives_the_local_bytes() {
    let cluster = Cluster::start();
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let relay = Relay::start(dir, &cluster.url(), &[], None);
    rounds_match_local(&relay, dir, &[("raw", false), ("gcs", true)]);
}

#[test]
fn a_round_over_tls_with_a_development_certificate() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    parties(dir);
    let relay = Relay::sqlite(dir, &["--dev"]);
    assert!(relay.url.starts_with("https://127.0.0.1:"), "{}", relay.url);
    assert!(relay.log().is_empty() || !relay.log().contains("error"));
    rounds_match_local(&relay, dir, &[("bloom", true)]);
    // Without the certificate the client refuses the relay.
    let (_, joiner) = relay.invite(dir, "untrusted", &[]);
    let mut args = round_args(&relay, "joiner", &joiner, "untrusted");
    let at = args.iter().position(|a| a == "--ca").unwrap();
    args.drain(at..at + 2);
    args.extend(strings(&["--retry-for", "0", "--out", "x.csv"]));
    let out = crate::lockstep(dir, &args);
    assert!(!out.status.success());
    assert!(
        crate::stderr(&out).contains("could not be reached"),
        "{}",
        crate::stderr(&out)
    );
}
