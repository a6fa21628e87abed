//! The public transcript as an HTML page: every contribution with its hashes, the queue and the
//! seal, readable without JavaScript (the page carries none, and its policy allows none).

use std::fmt::Write as _;

use super::wire::{FileView, TranscriptView};

/// `text` with HTML's special characters escaped (names and titles are the participants' and
/// the operator's words).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn link(t: &TranscriptView, file: &FileView) -> String {
    format!(
        "<a href=\"/v1/ceremonies/{}/files/{}\"><code>{}</code></a> ({} bytes)",
        t.ceremony, file.digest, file.digest, file.len
    )
}

/// The page of transcript `t`.
pub(crate) fn render(t: &TranscriptView) -> String {
    let mut html = String::new();
    let title = escape(&t.title);
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>body{{font-family:sans-serif;max-width:70em;margin:2em auto}}td,th{{padding:.2em .6em;text-align:left;vertical-align:top}}code{{font-size:.85em;word-break:break-all}}</style></head><body>\n\
         <h1>{title}</h1>\n<p>A {} ceremony, {} (2<sup>{}</sup>); turns of {} s. \
         <a href=\"/v1/ceremonies/{}/transcript\">The transcript as JSON</a>; \
         verify it all with <code>lockstep ceremony verify-transcript URL-OF-THIS-PAGE</code>.</p>\n",
        t.kind, t.phase, t.power, t.turn_secs, t.ceremony
    );
    for (name, file) in [
        ("Circuit (R1CS)", &t.r1cs),
        ("Phase 1", &t.phase1),
        ("Initial object", &t.initial),
    ] {
        if let Some(file) = file {
            let _ = writeln!(html, "<p>{name}: {}</p>", link(t, file));
        }
    }
    let _ = writeln!(
        html,
        "<h2>Contributions ({})</h2>\n<table><tr><th>#</th><th>participant</th><th>contribution hash</th><th>file</th><th>verified in</th><th>accepted at (Unix s)</th></tr>",
        t.contributions.len()
    );
    for entry in &t.contributions {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{} ms</td><td>{}</td></tr>",
            entry.index,
            escape(&entry.participant),
            entry.contribution_hash,
            link(t, &entry.file),
            entry.verify_ms,
            entry.accepted_at
        );
    }
    html.push_str("</table>\n");
    if !t.queue.is_empty() {
        let names: Vec<String> = t.queue.iter().map(|n| escape(n)).collect();
        let _ = writeln!(
            html,
            "<h2>Queue</h2>\n<ol><li>{}</li></ol>",
            names.join("</li><li>")
        );
    }
    if let Some(seal) = &t.seal {
        let _ = writeln!(
            html,
            "<h2>Seal</h2>\n<p>Beacon <code>{}</code> after {} SHA-256 iterations.</p>",
            seal.beacon, seal.iterations
        );
        if let Some(result) = &seal.result {
            let _ = writeln!(html, "<p>Result: {}</p>", link(t, result));
        }
        if let Some(vk) = &seal.verifying_key {
            let _ = writeln!(html, "<p>Verifying key: {}</p>", link(t, vk));
        }
    }
    html.push_str("</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ceremony::wire::Entry;

    #[test]
    fn names_and_titles_are_escaped_and_every_contribution_is_listed() {
        let file = FileView {
            digest: "ab".repeat(32),
            len: 10,
        };
        let t = TranscriptView {
            ceremony: "00".repeat(16),
            title: "<script>alert(1)</script>".into(),
            kind: "phase1".into(),
            power: 10,
            phase: "open".into(),
            turn_secs: 60,
            r1cs: None,
            phase1: None,
            initial: Some(file.clone()),
            contributions: (1..=2)
                .map(|index| Entry {
                    index,
                    participant: format!("p{index} & \"co\""),
                    file: file.clone(),
                    contribution_hash: "cd".repeat(32),
                    verify_ms: 5,
                    accepted_at: 1,
                })
                .collect(),
            queue: vec!["<b>".into()],
            seal: None,
        };
        let html = render(&t);
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"));
        assert!(html.contains("p1 &amp; &quot;co&quot;") && html.contains("p2 &amp;"));
        assert!(html.contains("&lt;b&gt;") && !html.contains("<b>"));
        assert_eq!(html.matches(&"cd".repeat(32)).count(), 2);
    }
}
