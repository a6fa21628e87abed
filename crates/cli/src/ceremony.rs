//! `lockstep ceremony ...`: a Groth16 trusted setup over files, phase 1 and phase 2, and the
//! verification of proofs made with its keys.
//!
//! Files are gnark v0.15's bytes, read strictly by the engine (every point checked; the first
//! bad one named with its byte offset) and written under the rules of `lockstep_files`: never
//! over an input, atomically, nothing left behind by an interruption. Every command runs with
//! one [`Context`]; what several share (the beacon, a contribution's run) has a module of its
//! own.

mod beacon;
mod context;
mod contribute;
mod info;
mod phase1;
mod phase2;
mod prove;
mod ptau;
mod server;
mod zkey;

use lockstep_ceremony::phase1::Phase1;
use lockstep_ceremony::phase2::Phase2;

use self::beacon::Beacon;
use self::context::{Context, Opened, hex};
use crate::args::{CeremonyCommand, Groth16Command, Phase1Command, Phase2Command, PtauCommand};
use crate::session::Session;

/// Runs a `lockstep groth16` subcommand (`lockstep ceremony groth16` is the same).
pub(crate) fn groth16(command: &Groth16Command, session: Session) -> anyhow::Result<()> {
    groth16_with(&Context { session }, command)
}

fn groth16_with(ctx: &Context, command: &Groth16Command) -> anyhow::Result<()> {
    match command {
        Groth16Command::Verify { vk, proof, public } => {
            if prove::is_json("--vk", vk)? {
                prove::verify_snarkjs(ctx, vk, proof, public)
            } else {
                phase2::groth16_verify(ctx, vk, proof, public)
            }
        }
        Groth16Command::Prepare { pk, out } => prove::prepare(ctx, pk, out),
        Groth16Command::Prove {
            zkey,
            pk,
            witness,
            proof,
            public,
            r1cs,
            vk,
            trust_key,
        } => match (zkey, pk, r1cs) {
            (Some(zkey), _, _) => prove::snarkjs(
                ctx,
                &prove::Files {
                    zkey,
                    witness,
                    proof,
                    public,
                    r1cs: r1cs.as_deref(),
                    trust_key: *trust_key,
                },
            ),
            (None, Some(pk), Some(r1cs)) => prove::gnark(
                ctx,
                &prove::GnarkFiles {
                    pk,
                    r1cs,
                    witness,
                    proof,
                    public,
                    vk: vk.as_deref(),
                    trust_key: *trust_key,
                },
            ),
            _ => unreachable!("invariant: clap requires --zkey, or --pk with --r1cs"),
        },
    }
}

/// Runs a `lockstep ceremony` subcommand.
pub(crate) fn run(command: &CeremonyCommand, session: Session) -> anyhow::Result<()> {
    let ctx = Context { session };
    match command {
        CeremonyCommand::Phase1(command) => match command {
            Phase1Command::New { power, out } => phase1::new(&ctx, *power, out),
            Phase1Command::Contribute(args) => contribute::contribute::<Phase1>(&ctx, args),
            Phase1Command::Verify {
                files,
                previous,
                sealed,
                beacon,
                iterations,
            } => phase1::verify(
                &ctx,
                files,
                previous.as_deref(),
                sealed.as_deref().zip(beacon.as_deref()),
                *iterations,
            ),
            Phase1Command::Seal { input, beacon, out } => phase1::seal(&ctx, input, beacon, out),
        },
        CeremonyCommand::Phase2(command) => match command {
            Phase2Command::New { r1cs, phase1, out } => phase2::new(&ctx, r1cs, phase1, out),
            Phase2Command::Contribute(args) => contribute::contribute::<Phase2>(&ctx, args),
            Phase2Command::Verify {
                files,
                previous,
                r1cs,
                phase1,
            } => phase2::verify(
                &ctx,
                files,
                previous.as_deref(),
                r1cs.as_deref().zip(phase1.as_deref()),
            ),
            Phase2Command::Seal {
                chain,
                r1cs,
                phase1,
                beacon,
                pk,
                vk,
            } => phase2::seal(
                &ctx,
                &phase2::SealArgs {
                    chain,
                    r1cs,
                    phase1,
                    beacon,
                    pk,
                    vk,
                },
            ),
        },
        CeremonyCommand::Groth16(command) => groth16_with(&ctx, command),
        CeremonyCommand::Ptau(PtauCommand::Import { input, out, srs }) => {
            ptau::import(&ctx, input, out, *srs)
        }
        CeremonyCommand::Ptau(PtauCommand::Export { input, out }) => ptau::export(&ctx, input, out),
        CeremonyCommand::Ptau(PtauCommand::Prepare { input, out }) => {
            ptau::prepare(&ctx, input, out)
        }
        CeremonyCommand::Zkey(command) => zkey::run(&ctx, command),
        CeremonyCommand::Info { file } => info::print(&ctx, file),
        CeremonyCommand::Open(args) => server::open(&ctx, args),
        CeremonyCommand::Participate(args) => server::participate(&ctx, args),
        CeremonyCommand::Register(args) => server::register(&ctx, args),
        CeremonyCommand::Seal(args) => server::seal(&ctx, args),
        CeremonyCommand::VerifyTranscript(args) => server::verify_transcript(&ctx, args),
    }
}
