//! The one order in which every table lists benchmark ids (text, markdown, HTML, history):
//! natural order, runs of digits compared as numbers, so `saxpy/1ms` < `saxpy/10ms` and
//! `n=2` < `n=10`.

use std::cmp::Ordering;

/// Compares `a` and `b` in natural order: text compared character by character, runs of
/// ASCII digits by their value (any length: leading zeros dropped, then the number of
/// digits, then the digits). Ids equal that way (`n=01`, `n=1`) are ordered by their bytes,
/// so the order is total and never calls two different ids equal.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (n, rest_x) = digits(x);
                let (m, rest_y) = digits(y);
                let (n, m) = (trim_zeros(n), trim_zeros(m));
                let by_value = n.len().cmp(&m.len()).then_with(|| n.cmp(m));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    // Bytes of UTF-8 compare as their characters do.
                    return c.cmp(d);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// Sorts ids (or anything with one) in [`natural_cmp`] order.
pub fn sort_natural<T>(items: &mut [T], id: impl Fn(&T) -> &str) {
    items.sort_by(|a, b| natural_cmp(id(a), id(b)));
}

fn digits(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s.iter().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

fn trim_zeros(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| b != b'0').unwrap_or(s.len());
    &s[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_compare_as_numbers() {
        let mut ids = vec![
            "saxpy/10ms",
            "saxpy/1ms",
            "saxpy/2ms",
            "n=10",
            "n=2",
            "n=1",
            "fma",
            "fma/o0",
            "a100",
            "a99",
            "b",
            "n=01",
            "x/99999999999999999999999",
            "x/100000000000000000000000",
        ];
        sort_natural(&mut ids, |s| s);
        assert_eq!(
            ids,
            [
                "a99",
                "a100",
                "b",
                "fma",
                "fma/o0",
                "n=01",
                "n=1",
                "n=2",
                "n=10",
                "saxpy/1ms",
                "saxpy/2ms",
                "saxpy/10ms",
                "x/99999999999999999999999",
                "x/100000000000000000000000"
            ]
        );
        assert_eq!(natural_cmp("saxpy/1ms", "saxpy/10ms"), Ordering::Less);
        assert_eq!(natural_cmp("n=2", "n=10"), Ordering::Less);
        assert_eq!(natural_cmp("same", "same"), Ordering::Equal);
        assert_ne!(natural_cmp("n=01", "n=1"), Ordering::Equal);
        assert_eq!(natural_cmp("能量2", "能量10"), Ordering::Less);
        assert_eq!(natural_cmp("", "a"), Ordering::Less);
    }

    #[test]
    fn the_order_is_total_and_consistent() {
        let ids = ["a1", "a01", "a1b", "a", "a10", "1", "01", "", "b0", "a1a", "a001"];
        for x in ids {
            for y in ids {
                assert_eq!(natural_cmp(x, y), natural_cmp(y, x).reverse(), "{x} {y}");
                assert_eq!(natural_cmp(x, y) == Ordering::Equal, x == y, "{x} {y}");
                for z in ids {
                    if natural_cmp(x, y).is_le() && natural_cmp(y, z).is_le() {
                        assert!(natural_cmp(x, z).is_le(), "{x} {y} {z}");
                    }
                }
            }
        }
    }
}
