//! FNV-1a (64 bits): the checksum of the files skillet keeps for itself (the embedding cache's
//! records, the kept word indexes' postings), catching damage, not tampering.

/// FNV-1a's offset basis: the hash of nothing.
pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// `hash` extended by `bytes`.
pub(crate) fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
