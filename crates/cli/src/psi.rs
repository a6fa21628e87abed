//! `lockstep psi ...`: the two parties' commands over files.
//!
//! Messages on disk are the raw protobuf bytes, so they interoperate with OpenMined's packages.
//! Record files, linkage files and every step of a round are `lockstep_psi::linkage`'s; files
//! are opened and written under the rules of `lockstep_files`. This module opens paths, calls
//! the engine and prints.

mod demo;
mod joiner;
mod keys;
mod relay;
mod starter;

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use anyhow::Context as _;
use lockstep_files::{OutputId, SecretFile, Staged, open_input, open_input_at_most, read_secret};
use lockstep_psi::linkage::{FileError, KeySpec, Party};
use lockstep_psi::{Backend, Element, ElementWriter, Key, Limits, StreamError};

use crate::args::{InputArgs, PsiArgs, PsiCommand};
use crate::session::{Session, thousands};

/// What every PSI command runs with.
pub(crate) struct Context {
    pub(crate) session: Session,
    pub(crate) backend: Backend,
    pub(crate) allow_open_key: bool,
}

impl Context {
    /// Reads a key file (see [`read_secret`]): 32 raw bytes, private to its owner unless
    /// `--allow-open-key`.
    pub(crate) fn read_key(&self, path: &Path) -> anyhow::Result<Key> {
        let bytes = read_secret(
            path,
            &SecretFile {
                what: "key",
                len: Key::LEN as u64,
                made_by: "`lockstep psi key new` writes one",
                allow_open: self.allow_open_key,
            },
        )?;
        Key::from_bytes(&bytes).with_context(|| format!("key {}", path.display()))
    }

    /// Reads a party's records (`--input`, with `--column` and `--normalize`) and their distinct
    /// keys, noting the rows left out for an empty key.
    pub(crate) fn load(&self, input: &InputArgs) -> anyhow::Result<Party> {
        let shown = input.input.display().to_string();
        let party = Party::read(open_input("--input", &input.input)?, &spec(input))
            .map_err(|e| e.in_file(&shown))?;
        let keys = party.keys();
        if let Some(first) = keys.empty_rows().first() {
            self.session.note(&format!(
                "{shown}: left out {} rows with an empty key (first: row {})",
                thousands(keys.empty_rows().len()),
                first + 1
            ));
        }
        Ok(party)
    }
}

/// The key spec of a party's `--column` and `--normalize` flags.
pub(crate) fn spec(input: &InputArgs) -> KeySpec {
    KeySpec {
        columns: input.column.clone(),
        normalize: input.normalize,
    }
}

/// Opens a message of `what` (`request`, ...) given by `flag`, refusing a regular file larger
/// than a message within `limits` can be before a byte of it is read.
pub(crate) fn open_message(
    flag: &str,
    path: &Path,
    what: &str,
    limits: Limits,
) -> anyhow::Result<File> {
    Ok(match (limits.max_encoded_len(), limits.element_limit()) {
        (Some(max), Some(count)) => open_input_at_most(
            flag,
            path,
            max,
            &format!("a {what} of at most {count} elements"),
        )?,
        _ => open_input(flag, path)?,
    })
}

/// Writes a message of `elements` to output `id` an element at a time ([`ElementWriter`],
/// started by `start` over the staged file): the bytes `to_bytes` gives, without a second copy
/// of the message in memory.
pub(crate) fn write_message(
    staged: &mut Staged,
    id: OutputId,
    start: impl FnOnce(BufWriter<&mut File>) -> Result<ElementWriter<BufWriter<&mut File>>, StreamError>,
    elements: &[Element],
) -> anyhow::Result<()> {
    let shown = staged.shown(id).display().to_string();
    let out = BufWriter::with_capacity(1 << 20, staged.file(id));
    let written = start(out).and_then(|mut writer| {
        elements.iter().try_for_each(|e| writer.push(e))?;
        writer.finish().map(drop)
    });
    written.with_context(|| format!("writing {shown}"))
}

/// A linkage file error, naming the file as given.
pub(crate) fn in_file(error: FileError, path: &Path) -> anyhow::Error {
    error.in_file(path.display().to_string()).into()
}

/// Runs a `lockstep psi` subcommand.
pub(crate) fn run(args: &PsiArgs, session: Session) -> anyhow::Result<()> {
    let ctx = Context {
        session,
        backend: args.backend,
        allow_open_key: args.allow_open_key,
    };
    match &args.command {
        PsiCommand::Key(command) => keys::key_command(&ctx, command),
        PsiCommand::Setup(a) => starter::setup(&ctx, a).map(drop),
        PsiCommand::Request(a) => joiner::request(&ctx, a).map(drop),
        PsiCommand::Respond(a) => starter::respond(&ctx, a).map(drop),
        PsiCommand::Intersect(a) => joiner::intersect(&ctx, a).map(drop),
        PsiCommand::Resolve(a) => starter::resolve(&ctx, a).map(drop),
        PsiCommand::Demo(a) => demo::run(&ctx, a),
        PsiCommand::Invite(a) => relay::invite(&ctx, a),
        PsiCommand::Round(a) => relay::round(&ctx, a),
    }
}
