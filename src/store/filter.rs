//! A fixed-size Bloom filter over Message-IDs, kept beside the SQL tables
//! it summarises so that most lookups never reach SQLite.
//!
//! It may answer "maybe" for an id it never saw (then the table is asked),
//! never "no" for one it saw: every id written to the table is added here
//! first, and nothing is ever removed (an id whose rows were deleted only
//! costs a query). Its size does not grow with the table: when the table
//! grows far beyond [`BITS`] / 10 ids, more answers are "maybe", never a
//! wrong one.

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

/// 2^21 bits: 256 KiB; about one false "maybe" in 1,000 at 200,000 ids.
const BITS: usize = 1 << 21;
/// Bits set per id.
const HASHES: u64 = 3;

pub struct Filter {
    words: Vec<u64>,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter { words: vec![0; BITS / 64] }
    }
}

impl Filter {
    /// The bit positions of `id`, by double hashing one 64-bit hash.
    fn positions(id: &str) -> impl Iterator<Item = usize> {
        let h = BuildHasherDefault::<DefaultHasher>::default().hash_one(id);
        let (a, b) = (h & 0xffff_ffff, (h >> 32) | 1);
        (0..HASHES).map(move |i| (a.wrapping_add(i.wrapping_mul(b)) % BITS as u64) as usize)
    }

    pub fn insert(&mut self, id: &str) {
        for p in Filter::positions(id) {
            self.words[p / 64] |= 1 << (p % 64);
        }
    }

    /// False only when `id` was never inserted.
    pub fn may_contain(&self, id: &str) -> bool {
        Filter::positions(id).all(|p| self.words[p / 64] & (1 << (p % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_forgets_and_rarely_imagines() {
        let mut f = Filter::default();
        let ids: Vec<String> = (0..20_000).map(|i| format!("<{i}.msg@example.org>")).collect();
        for id in &ids {
            f.insert(id);
        }
        assert!(ids.iter().all(|id| f.may_contain(id)));
        let imagined = (0..20_000).filter(|i| f.may_contain(&format!("<{i}.other@example.org>"))).count();
        assert!(imagined < 20, "{imagined} false positives in 20,000");
    }

    #[test]
    fn empty_contains_nothing() {
        let f = Filter::default();
        assert!(!f.may_contain("<a@b>"));
        assert!(!f.may_contain(""));
    }
}
