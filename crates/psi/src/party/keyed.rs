//! A role's key mapping parts of a step ([`Keyed`]).

use lockstep_shard::{Control, Pool};
use zeroize::Zeroize;

use crate::{Backend, Joiner, Key, Mode, Starter, parts};

use super::packed::unpack;
use super::{PartyError, Role};

/// A role's key, mapping parts of a step: a party's own, or a helper's, made only from a key
/// delivered to it (there is no other way to make one).
pub struct Keyed {
    pub(super) role: Role,
    pub(super) key: Key,
    /// The backend its maps compute on (the bytes are every backend's).
    pub(super) backend: Backend,
}

impl Keyed {
    /// A helper of `role` with the key delivered to it as `key` (exactly [`Key::LEN`] bytes,
    /// as [`Party::export_key`](super::Party::export_key) gives them). `key` is wiped before this returns, on success and
    /// on error.
    ///
    /// # Errors
    /// [`PartyError::KeyLength`]; [`PsiError::KeyOutOfRange`](crate::PsiError::KeyOutOfRange), [`PsiError::WeakKey`](crate::PsiError::WeakKey).
    pub fn from_key(role: Role, key: &mut [u8], backend: Backend) -> Result<Self, PartyError> {
        let parsed = if key.len() == Key::LEN {
            Key::from_bytes(key).map_err(PartyError::from)
        } else {
            Err(PartyError::KeyLength(key.len()))
        };
        key.zeroize();
        Ok(Self {
            role,
            key: parsed?,
            backend,
        })
    }

    /// The role this key masks for.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The backend this key's maps compute on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// A part of a setup's or a request's map: `k * H(key)` for each packed key
    /// (`values[ends[i-1]..ends[i]]`), packed elements in order. The control's progress is
    /// started with the part's count.
    ///
    /// # Errors
    /// [`PartyError::Input`] for inconsistent packing; [`PartyError::Psi`] for a cancelled run.
    pub fn mask(
        &self,
        values: &[u8],
        ends: &[u32],
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.mask_on(&Pool::current_thread(), values, ends, control)
    }

    /// [`mask`](Self::mask) sharded on `pool`: the same bytes at every worker count.
    ///
    /// # Errors
    /// As [`mask`](Self::mask).
    pub fn mask_on(
        &self,
        pool: &Pool,
        values: &[u8],
        ends: &[u32],
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        let keys = unpack(values, ends)?;
        control.progress().start(Some(keys.len() as u64));
        let masked =
            match self.role {
                Role::Starter => Starter::new(&self.key, Mode::Reveal, self.backend)?
                    .mask(pool, control, &keys)?,
                Role::Joiner => Joiner::new(&self.key, Mode::Reveal, self.backend)?
                    .mask(pool, control, &keys)?,
            };
        Ok(parts::pack(&masked))
    }

    /// A part of a response's map (a starter's): `k * element` for each packed element, the
    /// first at request index `first` (errors name request indexes).
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a joiner; [`PartyError::Psi`] for an element off the
    /// curve or a cancelled run.
    pub fn remask(
        &self,
        elements: &[u8],
        first: usize,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.remask_on(&Pool::current_thread(), elements, first, control)
    }

    /// [`remask`](Self::remask) sharded on `pool`: the same bytes at every worker count.
    ///
    /// # Errors
    /// As [`remask`](Self::remask).
    pub fn remask_on(
        &self,
        pool: &Pool,
        elements: &[u8],
        first: usize,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Starter, "re-mask")?;
        let elements = parts::unpack(elements)?;
        control.progress().start(Some(elements.len() as u64));
        let starter = Starter::new(&self.key, Mode::Reveal, self.backend)?;
        let remasked = starter.remask(pool, control, &elements, first)?;
        Ok(parts::pack(&remasked))
    }

    /// A part of an intersection's map (a joiner's): `k^-1 * element` for each packed element,
    /// the first at response index `first`.
    ///
    /// # Errors
    /// [`PartyError::WrongRole`] for a starter; [`PartyError::Psi`] for an element off the
    /// curve or a cancelled run.
    pub fn unmask(
        &self,
        elements: &[u8],
        first: usize,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.unmask_on(&Pool::current_thread(), elements, first, control)
    }

    /// [`unmask`](Self::unmask) sharded on `pool`: the same bytes at every worker count.
    ///
    /// # Errors
    /// As [`unmask`](Self::unmask).
    pub fn unmask_on(
        &self,
        pool: &Pool,
        elements: &[u8],
        first: usize,
        control: &Control,
    ) -> Result<Vec<u8>, PartyError> {
        self.expect_role(Role::Joiner, "unmask")?;
        let elements = parts::unpack(elements)?;
        control.progress().start(Some(elements.len() as u64));
        let joiner = Joiner::new(&self.key, Mode::Reveal, self.backend)?;
        let unmasked = joiner.unmask(pool, control, &elements, first)?;
        Ok(parts::pack(&unmasked))
    }

    pub(super) fn expect_role(&self, role: Role, step: &'static str) -> Result<(), PartyError> {
        if self.role == role {
            return Ok(());
        }
        Err(PartyError::WrongRole {
            role: self.role,
            step,
            other: role,
        })
    }
}
