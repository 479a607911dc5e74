//! [`Held`]: the waiting items kept in memory (within the frontier's budget), each at an
//! index that the visited map keeps for its key.

use super::Item;

/// Items in memory, at indices reused once their items are taken.
#[derive(Debug, Default)]
pub(super) struct Held {
    items: Vec<Option<Box<Item>>>,
    /// Indices of `items` free for the next item.
    free: Vec<usize>,
    /// Estimated bytes of the items held ([`weight`]).
    pub bytes: usize,
}

impl Held {
    /// Keeps `item`; its index.
    pub fn put(&mut self, item: Item) -> usize {
        self.bytes += weight(&item);
        let item = Some(Box::new(item));
        match self.free.pop() {
            Some(i) => {
                self.items[i] = item;
                i
            }
            None => {
                self.items.push(item);
                self.items.len() - 1
            }
        }
    }

    /// The item at `i`.
    pub fn get(&self, i: usize) -> Option<&Item> {
        self.items.get(i)?.as_deref()
    }

    /// Changes the item at `i` with `f`, the estimate with it.
    pub fn change<R>(&mut self, i: usize, f: impl FnOnce(&mut Item) -> R) -> Option<R> {
        let item = self.items.get_mut(i)?.as_deref_mut()?;
        let was = weight(item);
        let r = f(item);
        self.bytes = (self.bytes + weight(item)).saturating_sub(was);
        Some(r)
    }

    /// Takes the item at `i`, freeing its index.
    pub fn take(&mut self, i: usize) -> Option<Item> {
        let item = *self.items.get_mut(i)?.take()?;
        self.free.push(i);
        // An estimate: the item may have grown or shrunk since (a new parent).
        self.bytes = self.bytes.saturating_sub(weight(&item));
        Some(item)
    }
}

/// An item's memory, estimated: the struct and its strings, with allocation slack.
pub(super) fn weight(item: &Item) -> usize {
    let c = &item.record.context;
    let strings = item.record.url.len()
        + c.parent.as_ref().map_or(0, String::len)
        + c.link_text.as_ref().map_or(0, String::len);
    std::mem::size_of::<Item>() + strings + 64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::ItemKind;

    #[test]
    fn indices_are_reused_and_bytes_follow_the_items() {
        let item = |url: &str| Item::new(rip_core::Ref::new(url), 1, ItemKind::Page);
        let mut held = Held::default();
        let (a, b) = (held.put(item("http://h/a")), held.put(item("http://h/b")));
        let two = held.bytes;
        assert_eq!(
            held.take(a).map(|i| i.record.url),
            Some("http://h/a".into())
        );
        assert_eq!(held.take(a), None, "taken once");
        assert_eq!(held.put(item("http://h/c")), a, "reused");
        held.change(b, |i| i.record.url.push_str("/longer"))
            .unwrap();
        assert_eq!(held.bytes, two + "/longer".len());
        assert_eq!(
            held.get(b).map(|i| i.record.url.as_str()),
            Some("http://h/b/longer")
        );
        held.take(a);
        held.take(b);
        assert_eq!((held.bytes, held.get(b)), (0, None));
    }
}
