//! The relay's counters, rendered in Prometheus' text format at `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Counters since the server started: each a name, its labels and a value. Labels are fixed
/// words (a kind, an outcome, a refusal code), never a round id, a token or a value.
#[derive(Debug, Default)]
pub struct Metrics {
    counters: Mutex<BTreeMap<(&'static str, String), u64>>,
}

/// What each counter means, for the `# HELP` lines.
const HELP: &[(&str, &str)] = &[
    ("lockstep_requests_total", "HTTP requests answered"),
    ("lockstep_rounds_created_total", "rounds created"),
    (
        "lockstep_messages_removed_total",
        "message bodies removed with their closed or expired rounds",
    ),
    (
        "lockstep_uploads_total",
        "messages accepted, by kind and new or retry",
    ),
    ("lockstep_upload_bytes_total", "bytes of accepted messages"),
    ("lockstep_downloads_total", "messages read, by kind"),
    ("lockstep_download_bytes_total", "bytes of messages read"),
    ("lockstep_refusals_total", "requests refused, by code"),
    (
        "lockstep_objects_collected_total",
        "stored bodies no round named, removed",
    ),
    ("lockstep_ceremonies_created_total", "ceremonies created"),
    (
        "lockstep_ceremony_polls_total",
        "looks at a ceremony's turn by its participants",
    ),
    (
        "lockstep_contributions_total",
        "complete contribution uploads, by outcome (accepted or refused)",
    ),
    ("lockstep_ceremony_downloads_total", "ceremony files read"),
];

impl Metrics {
    /// Adds `by` to counter `name` with `labels` (`kind="setup"`, or empty).
    pub fn add(&self, name: &'static str, labels: String, by: u64) {
        debug_assert!(HELP.iter().any(|(n, _)| *n == name), "{name} has no help");
        let mut counters = self
            .counters
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *counters.entry((name, labels)).or_default() += by;
    }

    /// Adds one to counter `name` with `labels`.
    pub fn count(&self, name: &'static str, labels: String) {
        self.add(name, labels, 1);
    }

    /// The counters in Prometheus' text exposition format, every known name present (zero
    /// until counted), in a stable order.
    pub fn render(&self) -> String {
        let counters = self
            .counters
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut text = String::new();
        for (name, help) in HELP {
            let _ = writeln!(text, "# HELP {name} {help}\n# TYPE {name} counter");
            let mut any = false;
            for ((of, labels), value) in counters.range((*name, String::new())..) {
                if of != name {
                    break;
                }
                any = true;
                let labels = if labels.is_empty() {
                    String::new()
                } else {
                    format!("{{{labels}}}")
                };
                let _ = writeln!(text, "{name}{labels} {value}");
            }
            if !any {
                let _ = writeln!(text, "{name} 0");
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_by_name_with_their_labels() {
        let metrics = Metrics::default();
        metrics.count("lockstep_uploads_total", "kind=\"setup\"".into());
        metrics.add("lockstep_upload_bytes_total", String::new(), 40);
        metrics.count("lockstep_uploads_total", "kind=\"setup\"".into());
        metrics.count("lockstep_uploads_total", "kind=\"request\"".into());
        let text = metrics.render();
        assert!(text.contains("lockstep_uploads_total{kind=\"setup\"} 2\n"));
        assert!(text.contains("lockstep_uploads_total{kind=\"request\"} 1\n"));
        assert!(text.contains("lockstep_upload_bytes_total 40\n"));
        assert!(text.contains("lockstep_rounds_created_total 0\n"));
        assert!(!text.contains("lockstep_downloads_total{"));
    }
}
