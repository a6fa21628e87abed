//! Built-in sample data: synthetic people for two organisations with realistic overlaps, for
//! demos and tests of every front end (the same rows everywhere).
//!
//! Person `i` of an endless, deterministic population has a name, an email, a birth date and a
//! phone number derived from `i` alone. The starter holds people `0..n`, the joiner people
//! `3n/5 .. 3n/5 + 4n/5`, so the two share `2n/5` people. The joiner's emails are written the way
//! a second organisation would have typed them (another case, stray spaces) for a tenth of its
//! rows, each file has a few duplicate rows and a few rows without an email.

use std::io::Write;

use lockstep_shard::memory::{self, AllocError};

/// The columns of both files.
pub const HEADER: [&str; 5] = ["first_name", "last_name", "email", "birth_date", "phone"];

/// The key column the two organisations match on (normalized).
pub const KEY_COLUMN: &str = "email";

const FIRST: [&str; 40] = [
    "Ada",
    "Alan",
    "Grace",
    "Edsger",
    "Barbara",
    "Donald",
    "Frances",
    "John",
    "Katherine",
    "Dennis",
    "Margaret",
    "Ken",
    "Radia",
    "Tim",
    "Hedy",
    "Claude",
    "Sophie",
    "Niklaus",
    "Anita",
    "Guido",
    "Shafi",
    "Leslie",
    "Joan",
    "Fernando",
    "Mary",
    "Robin",
    "Jean",
    "Bjarne",
    "Adele",
    "Linus",
    "Evelyn",
    "Yukihiro",
    "Lynn",
    "Whitfield",
    "Kathleen",
    "Vint",
    "Susan",
    "Ivan",
    "Carol",
    "Ward",
];
const LAST: [&str; 40] = [
    "Lovelace",
    "Turing",
    "Hopper",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Allen",
    "Backus",
    "Johnson",
    "Ritchie",
    "Hamilton",
    "Thompson",
    "Perlman",
    "Berners-Lee",
    "Lamarr",
    "Shannon",
    "Wilson",
    "Wirth",
    "Borg",
    "Rossum",
    "Goldwasser",
    "Lamport",
    "Clarke",
    "Corbato",
    "Keller",
    "Milner",
    "Sammet",
    "Stroustrup",
    "Goldberg",
    "Torvalds",
    "Boyd",
    "Matsumoto",
    "Conway",
    "Diffie",
    "Booth",
    "Cerf",
    "Kare",
    "Sutherland",
    "Shaw",
    "Cunningham",
];
const DOMAINS: [&str; 5] = [
    "example.org",
    "example.com",
    "mail.example.net",
    "post.example",
    "inbox.example.org",
];

/// SplitMix64: a fixed, well-mixed sequence from a seed (sample data, not cryptography).
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn pick<'a>(list: &[&'a str], r: u64) -> &'a str {
    // Lists are short; the index fits.
    list[usize::try_from(r % list.len() as u64).unwrap_or(0)]
}

/// Person `i`'s fields: first name, last name, email, birth date, phone.
pub fn person(i: usize) -> [String; 5] {
    let r = mix(i as u64);
    let (first, last) = (pick(&FIRST, r), pick(&LAST, r >> 16));
    let domain = pick(&DOMAINS, r >> 32);
    let year = 1940 + (r >> 40) % 66;
    let month = 1 + (r >> 48) % 12;
    let day = 1 + (r >> 52) % 28;
    [
        first.to_owned(),
        last.to_owned(),
        format!(
            "{}.{}.{i}@{domain}",
            first.to_lowercase(),
            last.to_lowercase()
        ),
        format!("{year}-{month:02}-{day:02}"),
        format!("+44 20 7946 {:04}", (r >> 8) % 10_000),
    ]
}

/// The people `start..start + count` as written by one organisation, each passed to `row` (a
/// few twice: the file's duplicate rows).
fn rows<E>(
    start: usize,
    count: usize,
    retyped: bool,
    mut row: impl FnMut(&[String; 5]) -> Result<(), E>,
) -> Result<(), E> {
    for i in start..start + count {
        let mut p = person(i);
        let r = mix(i as u64 ^ 0x5eed);
        if retyped && r.is_multiple_of(10) {
            p[2] = format!(" {} ", p[2].to_uppercase());
        }
        if r % 97 == 1 {
            p[2].clear(); // a missing email
        }
        row(&p)?;
        if r % 61 == 2 {
            row(&p)?; // a duplicate row
        }
    }
    Ok(())
}

/// The two organisations' record files, as CSV.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Organisations {
    /// The starter's file: people `0..n`.
    pub starter: Vec<u8>,
    /// Its data rows.
    pub starter_rows: usize,
    /// The joiner's file: people `3n/5 .. 3n/5 + 4n/5`, some emails retyped.
    pub joiner: Vec<u8>,
    /// Its data rows.
    pub joiner_rows: usize,
}

/// The fewest people a starter's sample holds: fewer would leave the overlaps empty.
pub const MIN_PEOPLE: usize = 10;

/// The most people a starter's sample holds: 2,000,000, twice the largest set a party supports
/// in a browser tab (the two files are then about 150 and 120 MB).
pub const MAX_PEOPLE: usize = 2_000_000;

/// Bytes reserved a row before writing (the rows average about 75): a guess that saves the
/// file's regrowth, not a bound (the file grows past it fallibly).
const ROW_BYTES: usize = 80;

/// Why a sample was not made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SampleError {
    /// More people than [`MAX_PEOPLE`].
    #[error("a sample holds at most {MAX_PEOPLE} people, not {0}")]
    TooMany(u64),
    /// The files did not fit in memory.
    #[error("the sample's files do not fit in memory: {0}")]
    Memory(#[from] AllocError),
}

/// A file in memory that grows fallibly: a write that does not fit is an error, kept.
struct FileBytes {
    bytes: Vec<u8>,
    refused: Option<AllocError>,
}

impl Write for FileBytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Err(error) = memory::try_reserve(&mut self.bytes, buf.len()) {
            self.refused = Some(error);
            return Err(std::io::ErrorKind::OutOfMemory.into());
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One organisation's file: the header and its rows, with its row count.
fn file(start: usize, count: usize, retyped: bool) -> Result<(Vec<u8>, usize), SampleError> {
    let mut file = FileBytes {
        bytes: memory::try_with_capacity(count.saturating_mul(ROW_BYTES))?,
        refused: None,
    };
    let mut written = 0;
    let outcome = {
        let mut csv = csv::Writer::from_writer(&mut file);
        csv.write_record(HEADER)
            .and_then(|()| {
                rows(start, count, retyped, |p| {
                    written += 1;
                    csv.write_record(p)
                })
            })
            .and_then(|()| csv.flush().map_err(csv::Error::from))
    };
    if let Some(error) = file.refused {
        return Err(error.into());
    }
    outcome.expect("invariant: writing CSV into memory fails only when memory does");
    Ok((file.bytes, written))
}

/// The two organisations' CSV files for a starter of `n` people (at least [`MIN_PEOPLE`], at
/// most [`MAX_PEOPLE`]), the same bytes on every front end.
///
/// # Errors
/// [`SampleError::TooMany`] past [`MAX_PEOPLE`], before any work; [`SampleError::Memory`] for
/// files that do not fit.
pub fn organisations(n: usize) -> Result<Organisations, SampleError> {
    if n > MAX_PEOPLE {
        return Err(SampleError::TooMany(n as u64));
    }
    let n = n.max(MIN_PEOPLE);
    let (starter, starter_rows) = file(0, n, false)?;
    let (joiner, joiner_rows) = file(3 * n / 5, 4 * n / 5, true)?;
    Ok(Organisations {
        starter,
        starter_rows,
        joiner,
        joiner_rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_are_deterministic_and_emails_unique() {
        assert_eq!(person(7), person(7));
        let emails: std::collections::HashSet<String> =
            (0..5000).map(|i| person(i)[2].clone()).collect();
        assert_eq!(emails.len(), 5000);
        let mut retyped = Vec::new();
        rows(0, 1000, true, |p| {
            retyped.push(p.clone());
            Ok::<(), ()>(())
        })
        .unwrap();
        assert!(retyped.iter().any(|p| p[2].starts_with(' ')));
        assert!(retyped.iter().any(|p| p[2].is_empty()));
        assert!(retyped.len() > 1000);
    }

    #[test]
    fn the_files_are_csv_with_the_header() {
        let orgs = organisations(100).unwrap();
        assert!(
            orgs.starter
                .starts_with(b"first_name,last_name,email,birth_date,phone\n")
        );
        let lines = orgs.joiner.iter().filter(|&&b| b == b'\n').count();
        assert_eq!(lines, orgs.joiner_rows + 1);
        assert!(orgs.starter_rows >= 100 && orgs.joiner_rows >= 80);
    }

    #[test]
    fn a_sample_past_the_most_people_is_refused_before_any_work() {
        assert_eq!(
            organisations(MAX_PEOPLE + 1),
            Err(SampleError::TooMany(MAX_PEOPLE as u64 + 1))
        );
        assert_eq!(
            organisations(usize::MAX),
            Err(SampleError::TooMany(usize::MAX as u64))
        );
    }
}
