//! `psi invite` and `psi round`: a round through a relay. The steps are the local commands'
//! (`setup`, `request`, `respond`, `intersect`) on files in the round's folder, so a round
//! through a relay writes the same bytes; what to do next is `lockstep_server::client`'s.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use lockstep_psi::SetupFormat;
use lockstep_server::client::{self, Client, Step};
use lockstep_server::wire::{NewRound, PartyInvitation, RoundView};
use lockstep_server::{Kind, Role};

use super::{Context, joiner, starter};
use crate::args::{
    IntersectArgs, InviteArgs, RequestArgs, RespondArgs, RoleArg, RoundArgs, SetupArgs,
};
use crate::serve::{read_token_file, write_secret_file};
use crate::session::thousands;

/// An invitation file: `ROUND.TOKEN` (32 and 64 hex digits) and a newline.
const INVITATION_LEN: u64 = 32 + 1 + 64 + 1;

/// `psi invite`: a round created with the operator's token, its invitations written.
pub(crate) fn invite(ctx: &Context, args: &InviteArgs) -> anyhow::Result<()> {
    let text = read_token_file(
        &args.operator_token,
        "operator token",
        65,
        "`lockstep serve` writes one when the file is missing",
    )?;
    let operator = text
        .parse()
        .with_context(|| format!("operator token {}", args.operator_token.display()))?;
    let asked = NewRound {
        format: match args.format {
            SetupFormat::Raw => "raw",
            SetupFormat::Gcs => "gcs",
            SetupFormat::Bloom => "bloom",
        }
        .to_owned(),
        size_only: args.size_only,
        max_rows: args.max_rows,
        max_bytes: args
            .max_bytes
            .unwrap_or_else(|| NewRound::bytes_for(args.max_rows)),
        expires_in: args.expires_in,
    };
    let created = client::invite(
        &args.server.server,
        args.server.ca.as_deref(),
        &operator,
        &asked,
    )?;
    write_secret_file(
        &ctx.session,
        "--starter-out",
        &args.starter_out,
        &format!("{}\n", created.starter),
    )?;
    write_secret_file(
        &ctx.session,
        "--joiner-out",
        &args.joiner_out,
        &format!("{}\n", created.joiner),
    )?;
    ctx.session.note(&format!(
        "round {}: {asked}; invitations in {} (starter) and {} (joiner): give each to its party only",
        created.round,
        args.starter_out.display(),
        args.joiner_out.display()
    ));
    ctx.session.print(&format!("{}\n", created.round))
}

/// The files of a round's folder.
struct Folder {
    dir: PathBuf,
}

impl Folder {
    fn message(&self, kind: Kind) -> PathBuf {
        self.dir.join(format!("{kind}.pb"))
    }

    fn digest(&self, kind: Kind) -> anyhow::Result<Option<lockstep_server::Digest>> {
        let path = self.message(kind);
        if !path.exists() {
            return Ok(None);
        }
        Ok(Some(client::file_digest(&path)?))
    }
}

/// `psi round`: this party's whole side of the round, step after step, resumable from the
/// folder's files and what the relay holds.
pub(crate) fn round(ctx: &Context, args: &RoundArgs) -> anyhow::Result<()> {
    let text = read_token_file(
        &args.token,
        "invitation",
        INVITATION_LEN,
        "`lockstep psi invite` writes one",
    )?;
    let invitation: PartyInvitation = text
        .parse()
        .with_context(|| format!("invitation {}", args.token.display()))?;
    let round_id = invitation.round;
    let client = Client::new(
        &args.server.server,
        args.server.ca.as_deref(),
        invitation,
        Duration::from_secs(args.server.retry_for),
    )?;
    let role = match args.role {
        RoleArg::Starter => Role::Starter,
        RoleArg::Joiner => Role::Joiner,
    };
    let view = client.view()?;
    if view.role != role.to_string() {
        anyhow::bail!(
            "{} is the {}'s invitation, not the {role}'s",
            args.token.display(),
            view.role
        );
    }
    if role == Role::Joiner && args.out.is_none() && !view.size_only {
        crate::usage::usage!("the joiner of a round that reveals rows needs --out");
    }
    let folder = Folder {
        dir: args
            .dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("round-{round_id}"))),
    };
    std::fs::create_dir_all(&folder.dir)
        .with_context(|| format!("creating {}", folder.dir.display()))?;
    ctx.session.note(&format!(
        "round {round_id} as the {role}: a {} round{}, messages in {}",
        view.format,
        if view.size_only { " (size only)" } else { "" },
        folder.dir.display()
    ));

    // While waiting: a line that counts the seconds (hidden with --quiet or off a terminal).
    let mut waiting: Option<(crate::session::Step, Instant, u64)> = None;
    loop {
        let view = client.view()?;
        let mut local = [None; 3];
        for (slot, kind) in local.iter_mut().zip(Kind::ALL) {
            *slot = folder.digest(kind)?;
        }
        let step = client::next_step(role, &view, |kind| local[kind as usize])?;
        if !matches!(step, Step::Wait(_))
            && let Some((line, _, _)) = waiting.take()
        {
            line.finish();
        }
        match step {
            Step::Make(kind) => make(ctx, args, &folder, &view, kind)?,
            Step::Post(kind) => {
                let posted = client.post(kind, &folder.message(kind))?;
                ctx.session.note(&format!(
                    "posted the {kind}: {} bytes, sha256 {}",
                    thousands(posted.len),
                    posted.digest
                ));
                // The starter's last act: the joiner may close the round as soon as it reads.
                if kind == Kind::Response {
                    ctx.session.note("round done on the starter's side");
                    return Ok(());
                }
            }
            Step::Fetch(kind) => {
                let posted = view
                    .posted(kind)
                    .expect("invariant: a fetch is of a posted message");
                client.fetch(kind, &folder.message(kind), posted)?;
                ctx.session.note(&format!(
                    "fetched the {kind}: {} bytes, sha256 {}",
                    thousands(posted.len),
                    posted.digest
                ));
            }
            Step::Wait(kind) => {
                let (line, since, shown) = waiting.get_or_insert_with(|| {
                    ctx.session.note(&format!(
                        "waiting for the {}'s {kind} (up to {} s)",
                        kind.poster(),
                        args.wait
                    ));
                    let label = format!("waiting: {}'s {kind}", kind.poster());
                    (ctx.session.step(&label, None, "s"), Instant::now(), 0)
                });
                let seconds = since.elapsed().as_secs();
                line.control().progress().advance(seconds - *shown);
                *shown = seconds;
                if since.elapsed() >= Duration::from_secs(args.wait) {
                    anyhow::bail!(
                        "the {}'s {kind} has not come in {} s; run the same command again to go on waiting",
                        kind.poster(),
                        args.wait
                    );
                }
                std::thread::sleep(Duration::from_secs_f64(args.poll.clamp(0.05, 60.0)));
            }
            Step::Done => break,
        }
    }
    if role == Role::Starter {
        ctx.session.note("round done on the starter's side");
        return Ok(());
    }
    joiner::intersect(
        ctx,
        &IntersectArgs {
            key: args.key.clone(),
            setup: folder.message(Kind::Setup),
            response: folder.message(Kind::Response),
            input: args.input.clone(),
            request: Some(folder.message(Kind::Request)),
            size: view.size_only,
            out: if view.size_only {
                None
            } else {
                args.out.clone()
            },
            pairs_out: None,
        },
    )?;
    if !args.keep {
        client.close()?;
        ctx.session
            .note("closed the round: the relay removed its messages");
    }
    Ok(())
}

/// Makes this party's message of `kind` with the local command, into the round's folder.
fn make(
    ctx: &Context,
    args: &RoundArgs,
    folder: &Folder,
    view: &RoundView,
    kind: Kind,
) -> anyhow::Result<()> {
    let request_count = || {
        view.posted(Kind::Request)
            .and_then(|p| p.elements)
            .expect("invariant: the starter makes its messages once the request is in")
    };
    match kind {
        Kind::Setup => {
            let format: SetupFormat = view.format.parse().map_err(anyhow::Error::msg)?;
            starter::setup(
                ctx,
                &SetupArgs {
                    key: args.key.clone(),
                    input: args.input.clone(),
                    joiner_count: request_count(),
                    fpr: args.fpr,
                    format,
                    permutation_out: (format == SetupFormat::Raw)
                        .then(|| folder.dir.join("permutation.csv")),
                    out: folder.message(kind),
                },
            )
            .map(drop)
        }
        Kind::Request => joiner::request(
            ctx,
            &RequestArgs {
                key: args.key.clone(),
                input: args.input.clone(),
                size_only: view.size_only,
                out: folder.message(kind),
            },
        )
        .map(drop),
        Kind::Response => starter::respond(
            ctx,
            &RespondArgs {
                key: args.key.clone(),
                request: folder.message(Kind::Request),
                size_only: view.size_only,
                joiner_count: request_count(),
                out: folder.message(kind),
            },
        )
        .map(drop),
    }
}
