//! Files named on the command line: which may be read, where outputs go, and how they get there.
//!
//! A privacy engineer runs these commands by hand on their only copy of a key and of a record
//! list; one wrong path must never cost them either. The rules, each enforced here:
//!
//! - **Nothing is written over an input.** An output naming a command's input (the same path,
//!   or the same file through a symbolic or hard link or `..`) is a usage error before any
//!   work; so are two outputs naming one file.
//! - **All outputs or none.** Every output's directory and writability are checked and its
//!   temporary file created before the work starts; outputs are renamed into place only when
//!   every one is complete and synced to disk. A failed run changes no output.
//! - **Interruptions leave nothing.** Temporary files are named `.lockstep-tmp-<pid>-...`,
//!   removed on SIGINT, SIGTERM and SIGHUP, and those a killed run left behind (its process
//!   gone) are removed by the next run writing to that directory.
//! - **Special files.** An output that is a symbolic link is followed: the file it points to is
//!   replaced and the link stays. A character device (`/dev/null`) or FIFO is written in place,
//!   never replaced by a regular file; block devices, sockets and directories are refused.
//!   `-` is standard output where a command allows it.
//! - **Inputs are files or pipes.** Keys must be regular files of 32 bytes, not readable or
//!   writable by group or others unless allowed; record files and messages may be regular files
//!   or FIFOs, never devices, and lines longer than [`input::MAX_LINE`] (1 MiB) are refused (a binary or
//!   endless input fails at once instead of filling memory).
//!
//! New files are created with mode 0600 (owner only): outputs hold personal records, masked
//! sets or keys.

mod input;
mod kind;
mod output;
mod paths;
mod signals;

pub(crate) use input::{LineLimit, open_input, read_key, read_message};
pub(crate) use output::{Files, OutputId, Staged};
