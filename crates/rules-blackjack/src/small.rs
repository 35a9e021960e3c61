//! A small inline vector for the hot path (cards of a hand, stakes of a bet): no allocation up
//! to `N` items, a heap spill beyond (rare: long hands, many splits, junk records).

/// A value to fill the unused inline slots with.
pub trait Filler: Copy {
    const FILL: Self;
}

impl Filler for rules_core::Card {
    const FILL: Self = rules_core::Card::new(rules_core::Rank::Two, rules_core::Suit::Spades);
}

impl Filler for u8 {
    const FILL: Self = 0;
}

/// Inline-first vector of `Copy` items.
#[derive(Clone, Debug)]
pub struct Small<T: Filler, const N: usize> {
    len: usize,
    buf: [T; N],
    spill: Vec<T>,
}

impl<T: Filler, const N: usize> Default for Small<T, N> {
    fn default() -> Self {
        Small {
            len: 0,
            buf: [T::FILL; N],
            spill: Vec::new(),
        }
    }
}

impl<T: Filler, const N: usize> Small<T, N> {
    #[inline]
    pub fn push(&mut self, v: T) {
        if self.len < N {
            self.buf[self.len] = v;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.buf);
            }
            self.spill.push(v);
        }
        self.len += 1;
    }

    #[inline]
    pub fn as_slice(&self) -> &[T] {
        if self.len <= N {
            &self.buf[..self.len]
        } else {
            &self.spill
        }
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.len <= N {
            &mut self.buf[..self.len]
        } else {
            &mut self.spill
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len {
            return;
        }
        if self.len > N {
            self.spill.truncate(n);
            if n <= N {
                self.buf[..n].copy_from_slice(&self.spill[..n]);
                self.spill.clear();
            }
        }
        self.len = n;
    }
}

impl<T: Filler, const N: usize> std::ops::Deref for Small<T, N> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Filler, const N: usize> std::ops::DerefMut for Small<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

/// Inline-only vector: keeps the first `N` items and drops the rest (a hand's cards beyond the
/// twelfth are counted in its [`crate::hand::Count`] but not listed). `Copy`, no allocation.
#[derive(Clone, Copy, Debug)]
pub struct Capped<T: Filler, const N: usize> {
    len: u8,
    buf: [T; N],
}

impl<T: Filler, const N: usize> Capped<T, N> {
    pub const EMPTY: Self = Capped {
        len: 0,
        buf: [T::FILL; N],
    };

    pub fn push(&mut self, v: T) {
        let l = self.len as usize;
        if l < N {
            self.buf[l] = v;
            self.len += 1;
        }
    }

    pub fn truncate(&mut self, n: usize) {
        if n < self.len as usize {
            self.len = n as u8;
        }
    }
}

impl<T: Filler, const N: usize> Default for Capped<T, N> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<T: Filler, const N: usize> std::ops::Deref for Capped<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.buf[..self.len as usize]
    }
}

/// String equality without a call to `memcmp` (ids are a few bytes).
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_and_truncates() {
        let mut s: Small<u8, 2> = Small::default();
        for i in 0..5 {
            s.push(i);
        }
        assert_eq!(s.as_slice(), &[0, 1, 2, 3, 4]);
        s.truncate(1);
        assert_eq!(s.as_slice(), &[0]);
        s.push(9);
        s.push(8);
        assert_eq!(&s[..], &[0, 9, 8]);
        assert!(same("b1", "b1") && !same("b1", "b2") && !same("b1", "b10"));
    }
}
