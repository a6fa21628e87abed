//! A throwaway PostgreSQL for tests: a cluster of its own made with Debian's `initdb` and
//! `pg_ctl` in a temporary folder, listening only on a Unix socket there, stopped on drop. Shared
//! by the server crate's database tests and the CLI's relay tests (`#[path]`).
#![allow(dead_code, reason = "each test binary uses its part")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A PostgreSQL cluster of its own in a temporary folder, on a Unix socket only; stopped on drop.
pub(crate) struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Cluster {
    pub(crate) fn start() -> Self {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed (scripts/setup --test: Debian's postgresql)")
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|b| b.join("initdb").exists())
            .max()
            .expect("a PostgreSQL with initdb under /usr/lib/postgresql");
        let dir = tempfile::tempdir().unwrap();
        // initdb refuses root: as root, the cluster runs as Debian's postgres user.
        if is_root() {
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path()));
        }
        let data = dir.path().join("data");
        let cluster = Self { dir, bin };
        run(cluster
            .tool("initdb")
            .args(["-A", "trust", "-U", "lockstep", "--no-sync", "-D"])
            .arg(&data));
        cluster.up();
        cluster
    }

    /// Starts the cluster (again, after [`down`](Self::down)).
    pub(crate) fn up(&self) {
        let options = format!("-k {} -c listen_addresses='' -F", self.dir.path().display());
        run(self
            .tool("pg_ctl")
            .args(["-w", "-o", &options, "-l"])
            .arg(self.dir.path().join("log"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("start"));
    }

    /// Stops the cluster at once, as a crash would (its clients' connections drop).
    pub(crate) fn down(&self) {
        run(self
            .tool("pg_ctl")
            .args(["-m", "immediate", "-w", "-D"])
            .arg(self.dir.path().join("data"))
            .arg("stop"));
    }

    pub(crate) fn url(&self) -> String {
        format!(
            "postgres:///postgres?host={}&user=lockstep",
            self.dir.path().display()
        )
    }

    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data: &Path = &self.dir.path().join("data");
        let _ = self
            .tool("pg_ctl")
            .args(["-m", "immediate", "-w", "-D"])
            .arg(data)
            .arg("stop")
            .status();
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
}

fn run(command: &mut Command) {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
