//! Fallible allocation for memory sized by an input: a vector that does not fit is an error
//! naming its bytes, never an abort of the process.
//!
//! Rust's infallible allocations abort the process when the allocator refuses (under `ulimit
//! -v`, in a container's address-space limit, on a 32-bit target), taking the caller's process
//! with it (a Node addon's host, a CLI's staged files). Every vector whose length comes from an
//! input (a file's domain size, a caller's row count, a run's items) is allocated here instead.
//!
//! # Headroom
//! A large vector that fits exactly would leave nothing for the small, fixed allocations that
//! follow it (I/O buffers, a chunk of points, a thread's first allocation), which stay
//! infallible: so an allocation of at least [`PROBED_FROM`] bytes also asks for [`HEADROOM`]
//! bytes more, at once, and frees them. If those cannot be had, the vector is refused too. This
//! is a check at the moment of the allocation, not a reservation: it makes an abort in the
//! small allocations that follow unlikely, not impossible, where other threads allocate
//! meanwhile.

/// Bytes that must stay free beside an allocation of at least [`PROBED_FROM`] bytes: the fixed
/// buffers that follow such a vector (1 MiB I/O buffers, chunks of 4,096 points of up to 192
/// bytes, per-task parts) fit several times.
pub const HEADROOM: usize = 16 << 20;

/// The smallest allocation checked for [`HEADROOM`]: below it, the probe would cost more than
/// the vector.
pub const PROBED_FROM: usize = 1 << 20;

/// An allocation the allocator refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{bytes} bytes cannot be allocated")]
pub struct AllocError {
    /// The bytes asked for (the vector's own, without the headroom).
    pub bytes: usize,
}

/// The bytes of `len` values of `T`, saturated (a length whose bytes overflow cannot be
/// allocated either).
fn bytes_of<T>(len: usize) -> usize {
    len.saturating_mul(size_of::<T>())
}

/// Whether `bytes` can be had now: allocated and freed at once, never touched (so it costs
/// address space for a moment, no memory). A front end asks it once at start, for what its
/// fixed buffers and threads will need, so that a process too small to run says so instead
/// of aborting in its first buffer.
///
/// # Errors
/// [`AllocError`] naming `bytes` if the allocator refuses them.
pub fn probe(bytes: usize) -> Result<(), AllocError> {
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(bytes)
        .map_err(|_| AllocError { bytes })
}

/// Checks the headroom after a large reservation, refusing `bytes` if it is not free.
fn check_headroom(bytes: usize) -> Result<(), AllocError> {
    if bytes >= PROBED_FROM && probe(HEADROOM).is_err() {
        return Err(AllocError { bytes });
    }
    Ok(())
}

/// An empty vector with room for `len` values, or [`AllocError`].
///
/// # Errors
/// The allocator refuses `len` values, or the headroom beside them.
pub fn try_with_capacity<T>(len: usize) -> Result<Vec<T>, AllocError> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| AllocError {
        bytes: bytes_of::<T>(len),
    })?;
    check_headroom(bytes_of::<T>(len))?;
    Ok(out)
}

/// `len` copies of `value`, or [`AllocError`].
///
/// # Errors
/// As [`try_with_capacity`].
pub fn try_filled<T: Clone>(len: usize, value: T) -> Result<Vec<T>, AllocError> {
    let mut out = try_with_capacity(len)?;
    out.resize(len, value);
    Ok(out)
}

/// Room for `additional` more values in `vector`, grown as [`Vec::reserve`] grows it (at least
/// doubling, so a vector grown a chunk at a time is copied a bounded number of times), or
/// [`AllocError`] with `vector`'s values unchanged.
///
/// # Errors
/// As [`try_with_capacity`].
pub fn try_reserve<T>(vector: &mut Vec<T>, additional: usize) -> Result<(), AllocError> {
    reserve_by(vector, additional, Vec::try_reserve)
}

/// Room for exactly `additional` more values in `vector` ([`Vec::reserve_exact`]: a caller that
/// chose its own growth, such as a sort's run grown by doubling up to its share, gets no more
/// than it asked), or [`AllocError`] with `vector`'s values unchanged.
///
/// # Errors
/// As [`try_with_capacity`].
pub fn try_reserve_exact<T>(vector: &mut Vec<T>, additional: usize) -> Result<(), AllocError> {
    reserve_by(vector, additional, Vec::try_reserve_exact)
}

/// Room for `additional` more values by `reserve` (amortized or exact), then the headroom
/// check: the one body of [`try_reserve`] and [`try_reserve_exact`].
fn reserve_by<T>(
    vector: &mut Vec<T>,
    additional: usize,
    reserve: impl FnOnce(&mut Vec<T>, usize) -> Result<(), std::collections::TryReserveError>,
) -> Result<(), AllocError> {
    let bytes = bytes_of::<T>(vector.len().saturating_add(additional));
    if vector.capacity() - vector.len() >= additional {
        return Ok(());
    }
    reserve(vector, additional).map_err(|_| AllocError { bytes })?;
    check_headroom(bytes_of::<T>(vector.capacity())).map_err(|_| AllocError { bytes })
}

/// The items of an iterator of known length collected, or [`AllocError`] before any is taken.
///
/// # Errors
/// As [`try_with_capacity`].
pub fn try_collect<T>(items: impl ExactSizeIterator<Item = T>) -> Result<Vec<T>, AllocError> {
    let mut out = try_with_capacity(items.len())?;
    out.extend(items);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_fits_is_allocated_and_what_cannot_is_an_error() {
        let v: Vec<u64> = try_filled(1000, 7).unwrap();
        assert_eq!(v.len(), 1000);
        assert!(v.iter().all(|&x| x == 7));
        let c: Vec<u32> = try_collect((0..100u32).map(|x| x * 2)).unwrap();
        assert_eq!(c[99], 198);
        // No address space holds 2^62 words: an error naming the bytes, not an abort.
        let error = try_with_capacity::<u64>(1 << 62).unwrap_err();
        assert_eq!(error.bytes, usize::MAX);
        assert_eq!(
            try_filled(usize::MAX / 4, 0u16).unwrap_err().to_string(),
            format!("{} bytes cannot be allocated", (usize::MAX / 4) * 2)
        );
        let mut exact: Vec<u8> = Vec::with_capacity(64);
        exact.extend([0; 64]);
        try_reserve_exact(&mut exact, 36).unwrap();
        assert_eq!(exact.capacity(), 100, "exactly what was asked, not doubled");
        assert!(try_reserve_exact(&mut exact, usize::MAX / 2).is_err());
        let mut grown = vec![1u8; 10];
        assert!(try_reserve(&mut grown, usize::MAX / 2).is_err());
        assert_eq!(
            grown,
            vec![1u8; 10],
            "a refused reservation leaves the vector"
        );
    }
}
