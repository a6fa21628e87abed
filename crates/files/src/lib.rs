//! The files layer of lockstep's native front ends: which files may be read, where outputs go,
//! and how they get there.
//!
//! # Brief overview
//!
//! A privacy engineer runs lockstep by hand on their only copy of a key and of a record list; one
//! wrong path must never cost them either. The rules, each enforced here:
//!
//! - **Nothing is written over an input.** An output naming a command's input (the same path,
//!   or the same file through a symbolic or hard link or `..`) is a usage error before any
//!   work; so are two outputs naming one file ([`Files::prepare`]).
//! - **All outputs or none.** Every output's directory and writability are checked and its
//!   temporary file created before the work starts; outputs are renamed into place only when
//!   every one is complete and synced to disk ([`Staged::commit`]). A failed run changes no
//!   output.
//! - **Interruptions leave nothing.** Temporary files are named `.lockstep-tmp-<pid>-...`,
//!   removed on SIGINT, SIGTERM and SIGHUP, and those a killed run left behind (its process
//!   gone) are removed by the next run writing to that directory. A command's folder of
//!   temporary files ([`WorkDir`], an external sort's runs) is held to the same rules.
//! - **Special files.** An output that is a symbolic link is followed: the file it points to is
//!   replaced and the link stays. A character device (`/dev/null`) or FIFO is written in place,
//!   never replaced by a regular file; block devices, sockets and directories are refused.
//!   `-` is standard output where a command allows it.
//! - **Inputs are files or pipes** ([`open_input`]), never devices; a message larger than it
//!   can be is refused before a byte is read ([`open_input_at_most`]). **Secret files**
//!   ([`read_secret`]) must be regular files of their exact length, not readable or writable by
//!   group or others unless allowed (as ssh treats private keys).
//!
//! New files are created with mode 0600 (owner only: outputs hold personal records, masked
//! sets or keys) unless declared public ([`Files::public_output`], 0644: a ceremony's files).
//!
//! Every failure is one [`Error`] whose [`ErrorKind`] tells a usage error (exit 2) from a
//! refused file or an I/O failure; its message names the file as the command line gave it.
//!
//! ```
//! use std::io::Write;
//! use lockstep_files::Files;
//!
//! let dir = tempfile::tempdir()?;
//! let (input, out) = (dir.path().join("in.txt"), dir.path().join("out.txt"));
//! std::fs::write(&input, "rows")?;
//! let mut files = Files::new();
//! files.input("--input", &input);
//! let id = files.output("--out", &out, true);
//! let mut staged = files.prepare(&|_note| {})?; // every rule checked, nothing written yet
//! staged.file(id).write_all(b"result")?;
//! staged.commit()?; // now, and only now, out.txt exists
//! assert_eq!(std::fs::read(&out)?, b"result");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

mod error;
mod input;
mod kind;
mod memory;
mod output;
mod paths;
mod signals;
mod work;

pub use error::{Error, ErrorKind};
pub use input::{SecretFile, check_readable, open_input, open_input_at_most, read_secret};
pub use kind::Kind;
pub use memory::physical_memory;
pub use output::{Files, OutputId, Staged};
pub use signals::{PREFIX as TEMPORARY_PREFIX, STALE_AFTER, hand_signals_over};
pub use work::WorkDir;
