//! How much memory the machine has: the ceiling on what a front end reads from a pipe, whose
//! length nothing else bounds.

/// The machine's physical memory in bytes (Linux: `MemTotal` of `/proc/meminfo`), `None` where
/// it cannot be told.
pub fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = info
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn a_linux_machine_says_its_memory() {
        let bytes = super::physical_memory().expect("MemTotal in /proc/meminfo");
        assert!(bytes > 64 << 20, "{bytes}");
    }
}
