//! OpenMined PSI's own API rules: what `openmined.psi`'s `server` and `client` (and psi.js's)
//! accept and return, for a front end that stands in for them (`lockstep.psi` in Python).
//!
//! The record-linkage front ends ([`linkage`](crate::linkage), [`party`](crate::party)) refuse
//! what is most likely a mistake in a file: an empty set, a joiner count of 0. OpenMined's API
//! takes both, and its intersection has an order and a count of its own. Here, as OpenMined
//! 2.0.6 does (read from its `psi_server.cpp`, `datastructure/{raw,gcs,golomb}.cpp` and checked
//! against `openmined.psi` in `bindings/python/tests/`):
//!
//! - **Setup.** A raw setup ignores the rate and the joiner count (any value, even negative);
//!   GCS and Bloom need a joiner count of at least 1 and check the rate as corrected by it,
//!   `fpr / joiner_count`, in (0, 1) (so 1.5 for 10 joiner values is taken, as OpenMined takes
//!   it). Any of the three may be over an empty set.
//! - **Request.** May be empty ([`read_request`] reads one).
//! - **Intersection.** Raw: the joiner's unmasked elements sorted by `(bytes, index)` and merged
//!   with the sorted setup, each setup element taking at most one joiner element (a value the
//!   joiner holds three times and the starter twice is found twice, the two lowest indexes); in
//!   that merged order. GCS: every joiner element whose hash is in the set, ordered by `(hash,
//!   index)` (OpenMined sorts by hash alone with an unstable sort, so among equal hashes, a
//!   value the joiner repeats or two values whose hashes collide (about `fpr` likely), its
//!   order may differ from ours: past 16 client values with libstdc++, the Linux wheels'; other
//!   C++ libraries switch at other sizes). Bloom: every
//!   joiner element the filter holds, by index.
//! - **Size.** The intersection's length, in either mode.
//!
//! The messages are the engine's bytes: a setup, request or response here equals the one the
//! rest of the engine makes for the same values wherever both accept them.

use lockstep_shard::{Control, Pool};

use crate::params::Sizing;
use crate::{
    Element, Joiner, Mode, PsiError, Request, Response, ServerSetup, SetupFormat, SetupParams,
    Starter, bloom, gcs,
};

/// The setup message `server.CreateSetupMessage(fpr, num_client_inputs, inputs, ds)` makes:
/// `inputs` masked by `starter` on `pool`, in `format`.
///
/// # Errors
/// For GCS and Bloom only: [`PsiError::JoinerCount`] for a count below 1,
/// [`PsiError::FalsePositiveRate`] for a corrected rate outside (0, 1), [`PsiError::GcsTooLarge`], [`PsiError::SetupTooLarge`], all before any
/// masking. [`PsiError::Cancelled`] and runtime failures.
pub fn setup<T: AsRef<[u8]> + Sync>(
    starter: &Starter,
    pool: &Pool,
    control: &Control,
    inputs: &[T],
    format: SetupFormat,
    fpr: f64,
    joiner_count: i64,
) -> Result<ServerSetup, PsiError> {
    let sizing = match format {
        SetupFormat::Raw => Sizing::Raw,
        SetupFormat::Gcs | SetupFormat::Bloom => {
            let params = SetupParams {
                format,
                fpr,
                joiner_count: u64::try_from(joiner_count).unwrap_or(0),
            };
            params.sized_as_openmined(inputs.len())?
        }
    };
    let masked = starter.mask(pool, control, inputs)?;
    Ok(Starter::setup_sized(pool, control, masked, sizing)?.message)
}

/// The request `client.CreateRequest(inputs)` makes: `inputs` masked by `joiner` on `pool`, in
/// input order, in the joiner's mode. `inputs` may be empty.
///
/// # Errors
/// [`PsiError::Cancelled`] and runtime failures.
pub fn request<T: AsRef<[u8]> + Sync>(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    inputs: &[T],
) -> Result<Request, PsiError> {
    Ok(Request {
        mode: joiner.mode(),
        elements: joiner.mask(pool, control, inputs)?,
    })
}

/// A request read from `bytes` as OpenMined's `server` reads one: as
/// [`Request::from_bytes`], but a request without elements (an empty set's) is taken.
///
/// # Errors
/// As [`Request::from_bytes`], but for the empty set.
pub fn read_request(bytes: &[u8]) -> Result<Request, PsiError> {
    crate::message::decode::request_or_empty(bytes, crate::Limits::NONE)
}

/// `client.GetIntersection(setup, response)`: the joiner's indexes in OpenMined's order (the
/// module's docs).
///
/// # Errors
/// [`PsiError::SizeOnly`] for a size-only joiner; [`PsiError::InvalidSetup`] for a setup the
/// lookup cannot use; [`PsiError::Element`] for the first response element off the curve;
/// [`PsiError::Cancelled`] and runtime failures.
pub fn intersect(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    setup: &ServerSetup,
    response: &Response,
) -> Result<Vec<usize>, PsiError> {
    if joiner.mode() == Mode::SizeOnly {
        return Err(PsiError::SizeOnly);
    }
    found(joiner, pool, control, setup, response)
}

/// `client.GetIntersectionSize(setup, response)`: the length of [`intersect`]'s list, in
/// either mode.
///
/// # Errors
/// As [`intersect`], but for the mode.
pub fn intersection_size(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    setup: &ServerSetup,
    response: &Response,
) -> Result<usize, PsiError> {
    Ok(found(joiner, pool, control, setup, response)?.len())
}

fn found(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    setup: &ServerSetup,
    response: &Response,
) -> Result<Vec<usize>, PsiError> {
    setup.validate()?;
    let unmasked = joiner.unmask(pool, control, &response.elements, 0)?;
    in_openmined_order(setup, &unmasked)
}

/// The indexes of `unmasked` found in `setup`, in OpenMined's order (the module's docs).
pub(crate) fn in_openmined_order(
    setup: &ServerSetup,
    unmasked: &[Element],
) -> Result<Vec<usize>, PsiError> {
    match setup {
        ServerSetup::Raw(elements) => {
            let mut order: Vec<usize> = (0..unmasked.len()).collect();
            order.sort_unstable_by(|&a, &b| unmasked[a].cmp(&unmasked[b]).then(a.cmp(&b)));
            Ok(merge(&order, unmasked, elements))
        }
        ServerSetup::Gcs(g) => {
            let mut hashed: Vec<(u64, usize)> = unmasked
                .iter()
                .enumerate()
                .map(|(i, plain)| (gcs::element_hash(plain.as_ref(), g.hash_range), i))
                .collect();
            hashed.sort_unstable();
            let hashes: Vec<u64> = hashed.iter().map(|&(hash, _)| hash).collect();
            let members = gcs::members(&g.bits, g.div, &hashes)?;
            Ok(hashed
                .iter()
                .zip(members)
                .filter_map(|(&(_, index), member)| member.then_some(index))
                .collect())
        }
        ServerSetup::Bloom(b) => Ok(unmasked
            .iter()
            .enumerate()
            .filter_map(|(i, plain)| {
                bloom::contains(&b.bits, b.num_hash_functions, plain.as_ref()).then_some(i)
            })
            .collect()),
    }
}

/// OpenMined's raw merge: `order` walks `unmasked` sorted, `setup` is sorted; each setup element
/// takes at most one joiner element equal to it.
fn merge(order: &[usize], unmasked: &[Element], setup: &[Element]) -> Vec<usize> {
    let (mut i, mut j) = (0, 0);
    let mut found = Vec::new();
    while i < order.len() && j < setup.len() {
        let ours = &unmasked[order[i]];
        if ours < &setup[j] {
            i += 1;
        } else {
            if ours == &setup[j] {
                found.push(order[i]);
                i += 1;
            }
            j += 1;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Backend, Key};

    fn parties(mode: Mode) -> (Starter, Joiner) {
        let starter = Starter::new(&Key::generate().unwrap(), mode, Backend::fastest()).unwrap();
        let joiner = Joiner::new(&Key::generate().unwrap(), mode, Backend::fastest()).unwrap();
        (starter, joiner)
    }

    fn round(format: SetupFormat, starter_values: &[&str], joiner_values: &[&str]) -> Vec<usize> {
        let (pool, control) = (Pool::new(2).unwrap(), Control::new());
        let (starter, joiner) = parties(Mode::Reveal);
        let setup = setup(
            &starter,
            &pool,
            &control,
            starter_values,
            format,
            1e-9,
            i64::try_from(joiner_values.len()).unwrap().max(1),
        )
        .unwrap();
        let request = request(&joiner, &pool, &control, joiner_values).unwrap();
        let response = starter.respond(&pool, &control, &request).unwrap();
        let found = intersect(&joiner, &pool, &control, &setup, &response).unwrap();
        let size = intersection_size(&joiner, &pool, &control, &setup, &response).unwrap();
        assert_eq!(size, found.len());
        found
    }

    /// The raw merge as OpenMined's description reads, on plain values: a multiset
    /// intersection where each starter copy takes the lowest joiner index left.
    fn raw_model(starter_values: &[&str], joiner_values: &[&str]) -> Vec<usize> {
        let mut left: Vec<&str> = starter_values.to_vec();
        let mut found = Vec::new();
        for (i, v) in joiner_values.iter().enumerate() {
            if let Some(at) = left.iter().position(|s| s == v) {
                left.remove(at);
                found.push(i);
            }
        }
        found
    }

    #[test]
    fn raw_takes_each_starter_copy_once_and_orders_by_the_unmasked_bytes() {
        let starter_values = ["b", "b", "x", "é"];
        let joiner_values = ["q", "x", "q", "zz", "b", "é", "zz", "b", "b", "é"];
        let found = round(SetupFormat::Raw, &starter_values, &joiner_values);
        let mut sorted = found.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, raw_model(&starter_values, &joiner_values));
        // The two b's come in index order, next to each other, wherever b's element sorts.
        let at = found.iter().position(|&i| i == 4).unwrap();
        assert_eq!(found[at + 1], 7);
    }

    #[test]
    fn gcs_and_bloom_find_every_copy() {
        let starter_values = ["b", "x"];
        let joiner_values = ["b", "q", "b", "x", "b"];
        let mut gcs = round(SetupFormat::Gcs, &starter_values, &joiner_values);
        let bloom = round(SetupFormat::Bloom, &starter_values, &joiner_values);
        assert_eq!(bloom, [0, 2, 3, 4]);
        // Equal values hash alike: the b's stay in index order.
        let b: Vec<usize> = gcs
            .iter()
            .copied()
            .filter(|i| [0, 2, 4].contains(i))
            .collect();
        assert_eq!(b, [0, 2, 4]);
        gcs.sort_unstable();
        assert_eq!(gcs, [0, 2, 3, 4]);
    }

    #[test]
    fn empty_sets_and_counts_openmined_takes_are_taken() {
        let (pool, control) = (Pool::new(1).unwrap(), Control::new());
        let (starter, joiner) = parties(Mode::Reveal);
        let none: [&str; 0] = [];
        for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
            let setup = setup(&starter, &pool, &control, &none, format, 0.01, 1).unwrap();
            let request = request(&joiner, &pool, &control, &["a"]).unwrap();
            let response = starter.respond(&pool, &control, &request).unwrap();
            let found = intersect(&joiner, &pool, &control, &setup, &response).unwrap();
            assert!(found.is_empty(), "{format:?}");
        }
        // The corrected rate is what GCS and Bloom check: 1.5 for 10 joiner values is 0.15.
        for format in [SetupFormat::Gcs, SetupFormat::Bloom] {
            assert!(setup(&starter, &pool, &control, &["a"], format, 1.5, 10).is_ok());
        }
        // A raw setup ignores the rate and the count; the others refuse them.
        for (fpr, count) in [(2.0, 1), (0.1, 0), (0.1, -1), (20.0, 10)] {
            assert!(
                setup(
                    &starter,
                    &pool,
                    &control,
                    &["a"],
                    SetupFormat::Raw,
                    fpr,
                    count
                )
                .is_ok()
            );
            assert!(
                setup(
                    &starter,
                    &pool,
                    &control,
                    &["a"],
                    SetupFormat::Gcs,
                    fpr,
                    count
                )
                .is_err()
            );
        }
        let empty = request(&joiner, &pool, &control, &none).unwrap();
        let empty = read_request(&empty.to_bytes()).unwrap();
        assert!(
            Request::from_bytes(&empty.to_bytes()).is_err(),
            "the engine's rule elsewhere"
        );
        let response = starter.respond(&pool, &control, &empty).unwrap();
        assert!(response.elements.is_empty());
    }

    #[test]
    fn a_size_only_joiner_gets_a_size_and_no_list() {
        let (pool, control) = (Pool::new(1).unwrap(), Control::new());
        let (starter, joiner) = parties(Mode::SizeOnly);
        let setup = setup(
            &starter,
            &pool,
            &control,
            &["a", "b"],
            SetupFormat::Gcs,
            0.01,
            3,
        )
        .unwrap();
        let request = request(&joiner, &pool, &control, &["b", "c", "a"]).unwrap();
        let response = starter.respond(&pool, &control, &request).unwrap();
        let size = intersection_size(&joiner, &pool, &control, &setup, &response).unwrap();
        assert_eq!(size, 2);
        assert!(matches!(
            intersect(&joiner, &pool, &control, &setup, &response),
            Err(PsiError::SizeOnly)
        ));
    }
}
