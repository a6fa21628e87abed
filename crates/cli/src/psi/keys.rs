//! `psi key new`: a fresh key file.

use lockstep_files::Files;
use lockstep_psi::Key;

use super::Context;
use crate::args::KeyCommand;

/// `psi key new`: a new key, never over an existing file unless `--force` (and then still
/// atomically: the old key stays whole until the new one replaces it).
pub(crate) fn key_command(ctx: &Context, command: &KeyCommand) -> anyhow::Result<()> {
    match command {
        KeyCommand::New { out, force } => {
            let mut files = Files::new();
            let id = if *force {
                files.output("--out", out, false)
            } else {
                files.new_output("--out", out)
            };
            let mut staged = ctx.session.prepare(&files)?;
            if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
                anyhow::bail!("{}: a key is written to a regular file only", out.display());
            }
            // Refused early here, and again at the commit if a file appeared meanwhile.
            if !force && std::fs::metadata(out).is_ok() {
                anyhow::bail!(
                    "{}: already exists; a new key would make the old one's messages useless (use --force to replace it)",
                    out.display()
                );
            }
            let key = Key::generate()?;
            staged.write(id, key.to_bytes().as_ref())?;
            Ok(staged.commit()?)
        }
    }
}
