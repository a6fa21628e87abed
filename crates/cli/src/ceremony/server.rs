//! A ceremony through `lockstep serve`: `open` and `seal` (the operator), `register` and
//! `participate` (a participant), `verify-transcript` (anyone). The queue, the accept path and
//! the transcript are `lockstep_server::ceremony`'s; a contribution is made here by the same
//! run as `phase1 contribute` / `phase2 contribute`, and the transcript is verified by the same
//! runs as `phase1 verify` / `phase2 verify` and the seals, on the downloaded files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use lockstep_ceremony::phase1::Phase1;
use lockstep_ceremony::phase2::Phase2;
use lockstep_server::ceremony::client::{Operator, Participant, Public};
use lockstep_server::ceremony::wire::{FileView, NewCeremony, SealRequest, TranscriptView};
use lockstep_server::client::file_digest;
use lockstep_server::wire::PartyInvitation;
use lockstep_shard::Control;

use super::{Beacon, Context, contribute, hex, phase1, phase2};
use crate::args::{
    BeaconArgs, CeremonyKindArg, ContributeArgs, OpenArgs, ParticipateArgs, RegisterArgs,
    RemoteSealArgs, VerifyTranscriptArgs,
};
use crate::serve::{read_token_file, write_secret_file};

/// An invitation file: `CEREMONY.TOKEN` (32 and 64 hex digits) and a newline.
const INVITATION_LEN: u64 = 32 + 1 + 64 + 1;

fn operator(args_server: &crate::args::ServerArgs, token: &Path) -> anyhow::Result<Operator> {
    let text = read_token_file(
        token,
        "operator token",
        65,
        "`lockstep serve` writes one when the file is missing",
    )?;
    let token = text
        .parse()
        .with_context(|| format!("operator token {}", token.display()))?;
    Ok(Operator::new(
        &args_server.server,
        args_server.ca.as_deref(),
        token,
        Duration::from_secs(args_server.retry_for),
    )?)
}

/// A file name for a participant's invitation: its position and its name's safe characters.
fn invitation_name(position: usize, name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{position:02}-{safe}.invitation")
}

/// `ceremony open`.
pub(crate) fn open(ctx: &Context, args: &OpenArgs) -> anyhow::Result<()> {
    let operator = operator(&args.server, &args.operator_token)?;
    let asked = NewCeremony {
        kind: match args.kind {
            CeremonyKindArg::Phase1 => "phase1",
            CeremonyKindArg::Phase2 => "phase2",
            CeremonyKindArg::Zkey => "zkey",
        }
        .to_owned(),
        power: args.power.filter(|_| args.kind == CeremonyKindArg::Phase1),
        title: args.title.clone(),
        participants: args.participants.clone(),
        open_slots: args.open_slots,
        turn_secs: args.turn,
    };
    std::fs::create_dir_all(&args.invitations)
        .with_context(|| format!("creating {}", args.invitations.display()))?;
    let created = operator.create(&asked)?;
    for (i, invited) in created.invitations.iter().enumerate() {
        let path = args.invitations.join(invitation_name(i + 1, &invited.name));
        write_secret_file(
            &ctx.session,
            "--invitations",
            &path,
            &format!("{}\n", invited.invitation),
        )?;
        ctx.session.note(&format!(
            "{}: invitation of {:?}",
            path.display(),
            invited.name
        ));
    }
    let id: lockstep_server::RoundId = created
        .ceremony
        .parse()
        .map_err(|_| anyhow::anyhow!("the server answered a malformed ceremony id"))?;
    if let (Some(r1cs), Some(phase1)) = (&args.r1cs, &args.phase1) {
        operator.input(&id, "r1cs", r1cs)?;
        let transcript = operator.input(&id, "phase1", phase1)?;
        if let Some(initial) = &transcript.initial {
            ctx.session.note(&format!(
                "the initial object, derived by the server for 2^{}: {}",
                transcript.power, initial.digest
            ));
        }
    }
    let server = args.server.server.trim_end_matches('/');
    ctx.session
        .print(&format!("ceremony: {id}\npage: {server}/ceremonies/{id}\n"))
}

/// `ceremony register`.
pub(crate) fn register(ctx: &Context, args: &RegisterArgs) -> anyhow::Result<()> {
    let public = Public::from_page(&args.url, args.ca.as_deref(), Duration::from_secs(60))?;
    let registered = public.register(&args.name)?;
    write_secret_file(
        &ctx.session,
        "--out",
        &args.out,
        &format!("{}\n", registered.invitation),
    )?;
    ctx.session.print(&format!(
        "registered as {:?}; invitation in {}\n",
        registered.name,
        args.out.display()
    ))
}

/// `ceremony participate`.
pub(crate) fn participate(ctx: &Context, args: &ParticipateArgs) -> anyhow::Result<()> {
    let text = read_token_file(
        &args.token,
        "invitation",
        INVITATION_LEN,
        "the ceremony's operator or `lockstep ceremony register` writes it",
    )?;
    let invitation: PartyInvitation = text
        .parse()
        .with_context(|| format!("invitation {}", args.token.display()))?;
    drop(text);
    let me = Participant::new(
        &args.server.server,
        args.server.ca.as_deref(),
        invitation,
        Duration::from_secs(args.server.retry_for),
    )?;
    let mut view = me.join()?;
    let mut said = None;
    loop {
        if matches!(view.phase.as_str(), "sealing" | "sealed") {
            anyhow::bail!(
                "the ceremony is {}; it takes no more contributions",
                view.phase
            );
        }
        match view.status.as_str() {
            "holding" => break,
            "queued" => {
                if said != view.ahead {
                    ctx.session.note(&format!(
                        "in the queue as {:?}: {} ahead of you",
                        view.name,
                        view.ahead.unwrap_or(0)
                    ));
                    said = view.ahead;
                }
            }
            "contributed" => {
                anyhow::bail!("you contributed already; a participant contributes once")
            }
            other => anyhow::bail!(
                "your place in the ceremony is {other}: {}",
                view.reason
                    .as_deref()
                    .unwrap_or("join again to wait for a turn")
            ),
        }
        std::thread::sleep(Duration::from_secs(args.poll.max(1)));
        view = me.turn()?;
    }
    let head = view
        .head
        .clone()
        .ok_or_else(|| anyhow::anyhow!("the server gave the turn with no head"))?;
    if let Some(deadline) = view.deadline {
        ctx.session.note(&format!(
            "your turn: download, contribute and upload within {} s",
            deadline.saturating_sub(view.now)
        ));
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let head_path = args.dir.join(format!("head-{}", view.head_index));
    if !head_path.exists() {
        me.download(&head, &head_path)?;
    }
    let out = args
        .dir
        .join(format!("contribution-{}", view.head_index + 1));
    // A contribution made by an earlier run that did not finish its upload is resumed, not
    // made again (the server holds its first bytes).
    if !out.exists() {
        let contribute_args = ContributeArgs {
            input: head_path,
            out: out.clone(),
            entropy: args.entropy.clone(),
        };
        match view.kind.as_str() {
            "phase1" => contribute::contribute::<Phase1>(ctx, &contribute_args)?,
            "phase2" => contribute::contribute::<Phase2>(ctx, &contribute_args)?,
            // Recorded under the participant's public name, as the server requires.
            "zkey" => super::zkey::contribute(
                ctx,
                &contribute_args.input,
                &out,
                Some(&view.name),
                args.entropy.as_deref(),
            )?,
            other => {
                anyhow::bail!("a ceremony of kind {other:?}, which this lockstep does not know")
            }
        }
    }
    let accepted = me.upload(&out)?;
    let local = file_digest(&out)?.to_string();
    if accepted.digest != local {
        anyhow::bail!(
            "the server accepted a file of digest {}, but {} has {local}",
            accepted.digest,
            out.display()
        );
    }
    ctx.session.print(&format!(
        "accepted as contribution {} (verified in {} ms)\ncontribution hash: {}\n",
        accepted.index, accepted.verify_ms, accepted.contribution_hash
    ))?;
    ctx.session.note(
        "publish the contribution hash where others can see it, and check that the transcript lists it",
    );
    Ok(())
}

/// `ceremony seal`.
pub(crate) fn seal(ctx: &Context, args: &RemoteSealArgs) -> anyhow::Result<()> {
    // The beacon's rules (hex, iterations) checked here before the server is asked.
    Beacon::from_args(&args.beacon)?;
    let operator = operator(&args.server, &args.operator_token)?;
    let id = args
        .ceremony
        .parse()
        .map_err(|_| anyhow::anyhow!("--ceremony {}: 32 lowercase hex digits", args.ceremony))?;
    let transcript = operator.seal(
        &id,
        &SealRequest {
            beacon: args.beacon.beacon.clone(),
            iterations: args.beacon.iterations,
        },
    )?;
    let seal = transcript
        .seal
        .as_ref()
        .and_then(|s| s.result.as_ref())
        .ok_or_else(|| anyhow::anyhow!("the server answered the seal without its result"))?;
    ctx.session.print(&format!(
        "sealed after {} contributions\nresult: {}\n",
        transcript.contributions.len(),
        seal.digest
    ))?;
    if let Some(vk) = transcript
        .seal
        .as_ref()
        .and_then(|s| s.verifying_key.as_ref())
    {
        ctx.session
            .print(&format!("verifying key: {}\n", vk.digest))?;
    }
    Ok(())
}

/// `ceremony verify-transcript`.
pub(crate) fn verify_transcript(ctx: &Context, args: &VerifyTranscriptArgs) -> anyhow::Result<()> {
    let public = Public::from_page(&args.url, args.ca.as_deref(), Duration::from_secs(300))?;
    let t = public.transcript()?;
    let temporary;
    let dir = match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            dir.clone()
        }
        None => {
            temporary = tempfile::tempdir().context("a temporary folder")?;
            temporary.path().to_path_buf()
        }
    };
    let fetch = |file: &FileView, what: &str, name: &str| -> anyhow::Result<PathBuf> {
        let path = dir.join(name);
        if !path.exists() {
            public.download(file, what, &path)?;
        }
        Ok(path)
    };
    let initial = t
        .initial
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the ceremony has no initial object yet"))?;
    let mut chain = vec![fetch(initial, "initial object", "00-initial")?];
    for entry in &t.contributions {
        // gnark's contribution hash is the SHA-256 of the file's bytes, the digest checked as
        // it downloads (a `.zkey`'s is snarkjs's, checked as each link is verified).
        if t.kind != "zkey" && entry.contribution_hash != entry.file.digest {
            anyhow::bail!(
                "contribution {} lists hash {} for a file of SHA-256 {}",
                entry.index,
                entry.contribution_hash,
                entry.file.digest
            );
        }
        chain.push(fetch(
            &entry.file,
            &format!("contribution {}", entry.index),
            &format!("{:02}-contribution", entry.index),
        )?);
    }
    let seal = t.seal.as_ref().filter(|s| s.result.is_some());
    match t.kind.as_str() {
        "phase1" => verify_phase1(ctx, &t, &chain, seal.map(|s| (s, &fetch as &Fetch<'_>)))?,
        "phase2" => {
            let r1cs = fetch(
                t.r1cs
                    .as_ref()
                    .context("a phase 2 transcript without its circuit")?,
                "circuit",
                "circuit.r1cs",
            )?;
            let phase1 = fetch(
                t.phase1
                    .as_ref()
                    .context("a phase 2 transcript without its phase 1")?,
                "phase 1",
                "phase1.srs",
            )?;
            phase2::verify(ctx, &chain, None, Some((&r1cs, &phase1)))?;
            if let Some(seal) = seal {
                let pk = fetch(
                    seal.result.as_ref().expect("invariant: filtered"),
                    "proving key",
                    "sealed.pk",
                )?;
                let vk = fetch(
                    seal.verifying_key
                        .as_ref()
                        .context("a phase 2 seal without its verifying key")?,
                    "verifying key",
                    "sealed.vk",
                )?;
                let (local_pk, local_vk) = (dir.join("local.pk"), dir.join("local.vk"));
                for stale in [&local_pk, &local_vk] {
                    let _ = std::fs::remove_file(stale);
                }
                phase2::seal(
                    ctx,
                    &phase2::SealArgs {
                        chain: &chain,
                        r1cs: &r1cs,
                        phase1: &phase1,
                        beacon: &BeaconArgs {
                            beacon: seal.beacon.clone(),
                            iterations: seal.iterations,
                        },
                        pk: &local_pk,
                        vk: &local_vk,
                    },
                )?;
                for (theirs, ours, what) in [
                    (&pk, &local_pk, "proving key"),
                    (&vk, &local_vk, "verifying key"),
                ] {
                    if file_digest(theirs)? != file_digest(ours)? {
                        anyhow::bail!(
                            "REJECTED: the published {what} is not the seal of the chain with its beacon"
                        );
                    }
                }
                ctx.session
                    .print("the published keys are the seal of the chain with its beacon\n")?;
            }
        }
        "zkey" => verify_zkey(ctx, &t, &chain, seal, &fetch)?,
        other => anyhow::bail!("a ceremony of kind {other:?}, which this lockstep does not know"),
    }
    ctx.session.print(&format!(
        "transcript verified: {} contribution(s){}\n",
        t.contributions.len(),
        if seal.is_some() { ", and the seal" } else { "" }
    ))
}

type Fetch<'a> = dyn Fn(&FileView, &str, &str) -> anyhow::Result<PathBuf> + 'a;

/// A `.zkey` ceremony's transcript: the initial key is `zkey new`'s of the circuit and powers,
/// each contribution verified on the one before it (its listed hash snarkjs's), and the seal
/// the beacon's contribution on the last key, with its verification key.
fn verify_zkey(
    ctx: &Context,
    t: &TranscriptView,
    chain: &[PathBuf],
    seal: Option<&lockstep_server::ceremony::wire::SealView>,
    fetch: &Fetch<'_>,
) -> anyhow::Result<()> {
    use lockstep_ceremony::circom::CircomR1cs;
    use lockstep_ceremony::zkey::{self, Zkey};
    use lockstep_ceremony::{FileKind, Limits};
    let r1cs = fetch(
        t.r1cs
            .as_ref()
            .context("a .zkey transcript without its circuit")?,
        "circuit",
        "circuit.r1cs",
    )?;
    let ptau = fetch(
        t.phase1
            .as_ref()
            .context("a .zkey transcript without its powers of tau")?,
        "powers of tau",
        "powers.ptau",
    )?;
    let pool = ctx.pool(u64::MAX)?;
    let control = Control::new();
    let circuit = CircomR1cs::read(super::zkey::open_sectioned(
        "circuit",
        &r1cs,
        FileKind::CircomR1cs,
    )?)
    .context("the circuit")?;
    let initial = zkey::new(
        &pool,
        &control,
        &circuit,
        super::zkey::open_sectioned("powers", &ptau, FileKind::Ptau)?,
        &Limits::default(),
    )
    .context("the initial key")?;
    let digest = initial.write(&pool, &control, &zkey::NEW_ORDER, std::io::sink())?;
    if t.initial.as_ref().map(|f| f.digest.as_str()) != Some(hex(&digest).as_str()) {
        anyhow::bail!(
            "REJECTED: the initial key is not zkey new's of the circuit and powers of tau"
        );
    }
    let read = |path: &PathBuf| -> anyhow::Result<Zkey> {
        Zkey::read(
            &pool,
            &control,
            super::zkey::open_sectioned("key", path, FileKind::Zkey)?,
            &Limits::default(),
        )
        .with_context(|| format!("{}", path.display()))
    };
    let mut previous = initial;
    for (entry, path) in t.contributions.iter().zip(&chain[1..]) {
        let next = read(path)?;
        let verified = zkey::verify_contribution(&pool, &control, &previous, &next)
            .map_err(|e| anyhow::anyhow!("REJECTED: contribution {}: {e}", entry.index))?;
        if hex(&verified.hash) != entry.contribution_hash {
            anyhow::bail!(
                "REJECTED: contribution {} lists hash {}, but its key's is {}",
                entry.index,
                entry.contribution_hash,
                hex(&verified.hash)
            );
        }
        ctx.session.note(&format!(
            "contribution {} ({}) verified",
            entry.index, entry.participant
        ));
        previous = next;
    }
    if let Some(seal) = seal {
        let sealed = fetch(
            seal.result.as_ref().expect("invariant: filtered"),
            "final key",
            "final.zkey",
        )?;
        let vk = fetch(
            seal.verifying_key
                .as_ref()
                .context("a .zkey seal without its verification key")?,
            "verification key",
            "verification_key.json",
        )?;
        let beacon = super::beacon::parse_beacon(&seal.beacon)?;
        let exp = u8::try_from(seal.iterations.trailing_zeros()).unwrap_or(u8::MAX);
        let (key, _) = zkey::beacon(&pool, &control, previous, Some("beacon"), &beacon, exp)
            .context("the seal's beacon")?;
        let local = key.write(&pool, &control, &zkey::ORDER, std::io::sink())?;
        if file_digest(&sealed)?.to_string() != hex(&local) {
            anyhow::bail!(
                "REJECTED: the published key is not the beacon's contribution on the last key"
            );
        }
        if std::fs::read(&vk)? != zkey::verification_key_json(&key).into_bytes() {
            anyhow::bail!("REJECTED: the published verification key is not the final key's");
        }
        ctx.session.print(
            "the published key and verification key are the seal of the chain with its beacon\n",
        )?;
    }
    Ok(())
}

fn verify_phase1(
    ctx: &Context,
    t: &TranscriptView,
    chain: &[PathBuf],
    seal: Option<(&lockstep_server::ceremony::wire::SealView, &Fetch<'_>)>,
) -> anyhow::Result<()> {
    // The initial object is the one `phase1 new` makes, byte for byte.
    let initial = Phase1::initial(t.power)?;
    let expected = initial.write(
        &lockstep_shard::Pool::current_thread(),
        &Control::new(),
        std::io::sink(),
    )?;
    let listed = t.initial.as_ref().map(|f| f.digest.as_str());
    if listed != Some(hex(&expected).as_str()) {
        anyhow::bail!(
            "REJECTED: the initial object is not the one of 2^{} (its hash is {})",
            t.power,
            hex(&expected)
        );
    }
    let sealed = match seal {
        Some((seal, fetch)) => Some((
            fetch(
                seal.result.as_ref().expect("invariant: filtered"),
                "sealed SRS",
                "sealed.srs",
            )?,
            seal.beacon.clone(),
            seal.iterations,
        )),
        None => None,
    };
    phase1::verify(
        ctx,
        chain,
        None,
        sealed
            .as_ref()
            .map(|(path, beacon, _)| (path.as_path(), beacon.as_str())),
        sealed.as_ref().map_or(0, |(_, _, iterations)| *iterations),
    )
}
