//! Replies that carry a list are cut to what one gRPC message may hold.
//!
//! ledgerd encodes no message larger than `grpc.max_message_bytes` (tonic refuses it with
//! OUT_OF_RANGE, and the client learns nothing it asked for). A paged answer therefore takes
//! items while they fit, as well as while they are fewer than the request's limit, and names
//! where the next page starts: a short page with a continuation is the normal answer for a list
//! whose items are large, not an error. Only an item too large for a reply on its own is an
//! error (RESOURCE_EXHAUSTED, naming the item and the limit).

use tonic::Status;

/// Bytes kept aside for what a reply carries besides its list: the continuation (an id of at
/// most [`ledger_core::event::MAX_ID_LEN`] bytes, doubled by JSON escapes in the worst case, or a
/// `u64`), the JSON wrapper around a list, field tags and lengths.
pub const MARGIN: usize = 512;

/// What is left of one reply's size as items are added to it.
#[derive(Debug)]
pub struct Budget {
    max: usize,
    left: usize,
}

impl Budget {
    /// A reply of at most `max_message_bytes` (`grpc.max_message_bytes`), less [`MARGIN`].
    pub fn new(max_message_bytes: usize) -> Budget {
        let left = max_message_bytes.saturating_sub(MARGIN);
        Budget {
            max: max_message_bytes,
            left,
        }
    }

    /// Counts `bytes` if they fit; false, and nothing counted, if they do not.
    pub fn admit(&mut self, bytes: usize) -> bool {
        if bytes <= self.left {
            self.left -= bytes;
            true
        } else {
            false
        }
    }

    /// The error for an item that does not fit even in an empty reply.
    pub fn too_large(&self, what: &str, bytes: usize) -> Status {
        Status::resource_exhausted(format!(
            "{what} alone is {bytes} bytes: more than one reply may carry (grpc.max_message_bytes \
             = {}, of which {MARGIN} are kept for the reply's own fields)",
            self.max
        ))
    }
}

/// What one entry of a repeated message field (field number below 16) costs in a reply, for a
/// message that encodes to `len` bytes: its tag, its length and the message.
pub fn message_cost(len: usize) -> usize {
    1 + prost::length_delimiter_len(len) + len
}

/// What one element of a JSON array costs, for an element that serialises to `len` bytes: the
/// element and its comma.
pub fn json_cost(len: usize) -> usize {
    len.saturating_add(1)
}

/// Takes items from `items` while there are fewer than `limit` and they fit in `budget`;
/// `cost` gives an item's bytes in the reply ([`message_cost`], [`json_cost`]) and `name` says
/// which item it is.
///
/// Returns the page and whether an item was left over (so the page is not the last). An item
/// that does not fit in an empty page is an error: no page could ever hold it.
pub fn fill<T, E>(
    items: impl IntoIterator<Item = Result<T, E>>,
    limit: usize,
    budget: &mut Budget,
    cost: impl Fn(&T) -> Result<usize, E>,
    name: impl Fn(&T) -> String,
) -> Result<(Vec<T>, bool), E>
where
    E: From<Status>,
{
    let mut page = Vec::new();
    for item in items {
        let item = item?;
        if page.len() >= limit {
            return Ok((page, true));
        }
        let bytes = cost(&item)?;
        if !budget.admit(bytes) {
            if page.is_empty() {
                return Err(budget.too_large(&name(&item), bytes).into());
            }
            return Ok((page, true));
        }
        page.push(item);
    }
    Ok((page, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_admits_until_full_and_counts_nothing_it_refuses() {
        let mut b = Budget::new(MARGIN + 100);
        assert!(b.admit(60));
        assert!(!b.admit(41));
        assert!(b.admit(40));
        assert!(!b.admit(1));
        assert!(b.admit(0));
        // Below the margin nothing fits.
        assert!(!Budget::new(MARGIN - 1).admit(1));
        assert!(!Budget::new(0).admit(1));
    }

    #[test]
    fn an_entry_costs_its_tag_and_length_or_its_comma_too() {
        // Up to 127 bytes the length takes one byte; from 128, two.
        assert_eq!(message_cost(0), 2);
        assert_eq!(message_cost(127), 129);
        assert_eq!(message_cost(128), 131);
        assert_eq!(message_cost(16_384), 16_388);
        assert_eq!(json_cost(9), 10);
        assert_eq!(json_cost(usize::MAX), usize::MAX);
    }

    fn fill_sizes(
        sizes: &[usize],
        limit: usize,
        room: usize,
    ) -> Result<(Vec<usize>, bool), Status> {
        let mut b = Budget::new(MARGIN + room);
        fill(
            sizes.iter().map(|s| Ok::<_, Status>(*s)),
            limit,
            &mut b,
            |s| Ok(*s),
            |s| format!("item of {s}"),
        )
    }

    #[test]
    fn a_page_stops_at_its_limit_or_when_full_and_says_whether_more_remain() {
        assert_eq!(
            fill_sizes(&[10, 10, 10], 5, 100).unwrap(),
            (vec![10, 10, 10], false)
        );
        assert_eq!(
            fill_sizes(&[10, 10, 10], 2, 100).unwrap(),
            (vec![10, 10], true)
        );
        assert_eq!(
            fill_sizes(&[10, 10, 10], 3, 100).unwrap(),
            (vec![10, 10, 10], false)
        );
        assert_eq!(
            fill_sizes(&[50, 40, 20], 5, 100).unwrap(),
            (vec![50, 40], true)
        );
        assert_eq!(fill_sizes(&[], 5, 100).unwrap(), (vec![], false));
        let e = fill_sizes(&[101, 1], 5, 100).unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        assert!(
            e.message().starts_with("item of 101 alone is 101 bytes"),
            "{e:?}"
        );
        assert!(e.message().contains("grpc.max_message_bytes"), "{e:?}");
    }
}
