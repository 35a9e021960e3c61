//! C2SP tlog-tiles (<https://c2sp.org/tlog-tiles>) resource paths: `tile/<L>/<N>[.p/<W>]` (the
//! hashes of level `L`, tile `N`: `W` of them if partial, else 256) and
//! `tile/entries/<N>[.p/<W>]` (the entries themselves, each as a big-endian `u16` length and its
//! bytes). `N` is written in groups of three decimal digits, all but the last prefixed with `x`
//! (`1234067` → `x001/x234/067`).

use crate::merkle::{TILE_HEIGHT, TILE_WIDTH};

/// A tile resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TilePath {
    /// `None`: an entry bundle; `Some(L)`: the hash tile of level L.
    pub level: Option<u8>,
    pub n: u64,
    /// 1..=256; 256 is a full tile.
    pub width: u16,
}

/// The highest level a tree of 2^64 entries has tiles of.
pub const MAX_LEVEL: u8 = (64 / TILE_HEIGHT) as u8;

impl TilePath {
    /// The path, as a server serves it (without a prefix).
    pub fn path(&self) -> String {
        let mut n = self.n;
        let mut s = format!("{:03}", n % 1000);
        while n >= 1000 {
            n /= 1000;
            s = format!("x{:03}/{s}", n % 1000);
        }
        let level = match self.level {
            Some(l) => l.to_string(),
            None => "entries".into(),
        };
        let partial = if u64::from(self.width) == TILE_WIDTH {
            String::new()
        } else {
            format!(".p/{}", self.width)
        };
        format!("tile/{level}/{s}{partial}")
    }

    /// Parse a path (without a prefix): only the canonical form of each resource is accepted.
    pub fn parse(path: &str) -> Option<TilePath> {
        if path.len() > 64 {
            return None;
        }
        let rest = path.strip_prefix("tile/")?;
        let (level, rest) = rest.split_once('/')?;
        let level = match level {
            "entries" => None,
            l => {
                let l: u8 = l.parse().ok()?;
                if l > MAX_LEVEL {
                    return None;
                }
                Some(l)
            }
        };
        let (digits, width) = match rest.split_once(".p/") {
            Some((d, w)) => {
                let w: u16 = w.parse().ok()?;
                if w == 0 || u64::from(w) >= TILE_WIDTH {
                    return None;
                }
                (d, w)
            }
            None => (rest, TILE_WIDTH as u16),
        };
        let mut n: u64 = 0;
        for part in digits.split('/') {
            let d = part.strip_prefix('x').unwrap_or(part);
            if d.len() != 3 || !d.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            n = n.checked_mul(1000)?.checked_add(d.parse::<u64>().ok()?)?;
        }
        let t = TilePath { level, n, width };
        // One spelling per resource (the x prefixes where they belong, no leading groups of 0).
        (t.path() == path).then_some(t)
    }

    /// The index of the first hash (or entry) of the tile within its level.
    pub fn first(&self) -> Option<u64> {
        self.n.checked_mul(TILE_WIDTH)
    }

    /// The hashes (of its level) or entries past the last one it holds.
    pub fn end(&self) -> Option<u64> {
        self.first()?.checked_add(u64::from(self.width))
    }
}

/// The tiles of a tree of `size` entries that a client reads to prove anything in it: the
/// rightmost tile of each level is partial (a client computes which from the checkpoint).
pub fn tile_of(level: u8, index_in_level: u64, size: u64) -> TilePath {
    let count = size >> (TILE_HEIGHT * u32::from(level));
    let n = index_in_level / TILE_WIDTH;
    let width = (count - n * TILE_WIDTH).min(TILE_WIDTH) as u16;
    TilePath {
        level: Some(level),
        n,
        width,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_and_read_back_in_their_one_canonical_form() {
        for (t, p) in [
            (
                TilePath {
                    level: Some(0),
                    n: 0,
                    width: 256,
                },
                "tile/0/000",
            ),
            (
                TilePath {
                    level: Some(1),
                    n: 1_234_067,
                    width: 256,
                },
                "tile/1/x001/x234/067",
            ),
            (
                TilePath {
                    level: None,
                    n: 5,
                    width: 17,
                },
                "tile/entries/005.p/17",
            ),
            (
                TilePath {
                    level: Some(2),
                    n: 999,
                    width: 255,
                },
                "tile/2/999.p/255",
            ),
            (
                TilePath {
                    level: Some(0),
                    n: 1000,
                    width: 256,
                },
                "tile/0/x001/000",
            ),
        ] {
            assert_eq!(t.path(), p);
            assert_eq!(TilePath::parse(p), Some(t), "{p}");
        }
        for bad in [
            "tile/0/0",
            "tile/0/0000",
            "tile/0/001/002",
            "tile/0/x000/001",
            "tile/0/001.p/0",
            "tile/0/001.p/256",
            "tile/0/001.p/017x",
            "tile/9/001",
            "tile/-1/001",
            "tile/entries/",
            "tile/a/001",
            "tiles/0/001",
            "tile/0/x018/x446/x744/x073/x709/x551/616",
        ] {
            assert_eq!(TilePath::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_rightmost_tile_of_a_level_is_partial() {
        // 70,000 entries: level 0 has 273 full tiles and 112 in the 274th; level 1 has 273
        // hashes, one full tile and 17 in the next.
        assert_eq!(tile_of(0, 0, 70_000).width, 256);
        assert_eq!(
            tile_of(0, 69_999, 70_000),
            TilePath {
                level: Some(0),
                n: 273,
                width: 112
            }
        );
        assert_eq!(
            tile_of(1, 272, 70_000),
            TilePath {
                level: Some(1),
                n: 1,
                width: 17
            }
        );
    }
}
