//! gnark's harness (`interop/gnark`), built once per test binary by `go build` (cached by Go
//! between binaries), for the test binaries that check our files against gnark's code.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The harness's path, built on first use.
pub(crate) fn harness() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/gnark");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "gnark-harness-{}",
            std::env::current_exe()
                .ok()
                .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .unwrap_or_default()
        ));
        let status = Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(&dir)
            .status()
            .expect("go is installed (scripts/setup --test)");
        assert!(status.success(), "building the gnark harness failed");
        out
    })
}
