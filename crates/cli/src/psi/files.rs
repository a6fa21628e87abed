//! Key files and message files.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use lockstep_psi::Key;
use tempfile::NamedTempFile;

use crate::args::KeyCommand;

/// `psi key new`.
pub(crate) fn key_command(command: &KeyCommand) -> anyhow::Result<()> {
    match command {
        KeyCommand::New { out, force } => {
            if out.exists() && !force {
                anyhow::bail!(
                    "{}: already exists; a new key would make the old one's messages useless (use --force to replace it)",
                    out.display()
                );
            }
            let key = Key::generate()?;
            write_secret(out, key.to_bytes().as_ref())
        }
    }
}

/// Reads a key file: exactly 32 raw bytes.
pub(crate) fn read_key(path: &Path) -> anyhow::Result<Key> {
    let bytes = zeroize::Zeroizing::new(
        std::fs::read(path).with_context(|| format!("reading key {}", path.display()))?,
    );
    if bytes.len() != 32 {
        anyhow::bail!(
            "{}: a key file holds exactly 32 raw bytes (`lockstep psi key new` writes one); this one has {}",
            path.display(),
            bytes.len()
        );
    }
    Key::from_bytes(&bytes).with_context(|| format!("key {}", path.display()))
}

/// Reads a message file.
pub(crate) fn read_message(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {what} {}", path.display()))
}

/// A file written beside its destination and renamed into place on [`commit`](Self::commit).
pub(crate) struct Output {
    temp: NamedTempFile,
    path: std::path::PathBuf,
}

impl Output {
    pub(crate) fn create(path: &Path) -> anyhow::Result<Self> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = NamedTempFile::new_in(dir)
            .with_context(|| format!("creating a file in {}", dir.display()))?;
        Ok(Self {
            temp,
            path: path.to_owned(),
        })
    }

    pub(crate) fn writer(&mut self) -> &mut std::fs::File {
        self.temp.as_file_mut()
    }

    pub(crate) fn commit(self) -> anyhow::Result<()> {
        // Some file systems report a full disk only here: never rename a short file into place.
        self.temp
            .as_file()
            .sync_all()
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.temp
            .persist(&self.path)
            .map_err(|e| e.error)
            .with_context(|| format!("writing {}", self.path.display()))?;
        Ok(())
    }
}

/// Writes `bytes` to `path` atomically.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    prepare_file(path, bytes)?.commit()
}

/// Writes `bytes` beside `path`, to be renamed into place by [`Output::commit`] once every output
/// of a command is ready.
pub(crate) fn prepare_file(path: &Path, bytes: &[u8]) -> anyhow::Result<Output> {
    let mut out = Output::create(path)?;
    out.writer()
        .write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(out)
}

/// Writes a secret with mode 0600 (owner read/write only), atomically.
fn write_secret(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = Output::create(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        out.writer()
            .set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("restricting {}", path.display()))?;
    }
    out.writer()
        .write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    out.commit()
}

/// A CSV writer into an [`Output`].
pub(crate) struct CsvOutput {
    writer: csv::Writer<std::io::BufWriter<std::fs::File>>,
    output: Output,
}

impl CsvOutput {
    pub(crate) fn create(path: &Path) -> anyhow::Result<Self> {
        let output = Output::create(path)?;
        let file = output
            .temp
            .reopen()
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(Self {
            writer: csv::Writer::from_writer(std::io::BufWriter::new(file)),
            output,
        })
    }

    pub(crate) fn row<I, T>(&mut self, fields: I) -> anyhow::Result<()>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        self.writer
            .write_record(fields)
            .with_context(|| format!("writing {}", self.output.path.display()))
    }

    pub(crate) fn commit(self) -> anyhow::Result<()> {
        self.finish()?.commit()
    }

    /// Flushes the rows; the returned file is renamed into place by its `commit`.
    pub(crate) fn finish(self) -> anyhow::Result<Output> {
        let path = self.output.path.clone();
        self.writer
            .into_inner()
            .map_err(|e| anyhow::anyhow!("writing {}: {}", path.display(), e.error()))?
            .flush()
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(self.output)
    }
}
