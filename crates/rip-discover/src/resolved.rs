//! Hrefs already resolved, remembered by the directory of the page they were found on.
//!
//! A site repeats its navigation links on every page of a directory (rustdoc: the same
//! crate, module and sidebar links on each of a module's pages), and resolving one
//! (`Url::join`, then canonicalisation) costs about a microsecond. An href that needs
//! nothing of its base past the directory ([`HrefNeeds::Dir`]: `b.html`, `../c/`, `/a`,
//! `https://…`) gives the same canonical URL on every page of that directory, so it is
//! resolved once per directory and then looked up. A `#…` href names the page itself: it
//! is resolved once per page. Any other href is resolved every time.
//!
//! Which hrefs need what of their base is [`rip_url::join`]'s ([`href_needs`],
//! [`base_dir`]), beside the string join rip-parse resolves its links with.
//!
//! What is remembered is what [`Canonicalizer::resolve`] gave (a rejection too), so a
//! link found through the cache is the link found without it: same URL, same key, same
//! counters. The scope decides each link afresh (the scope can grow during a crawl).
//!
//! Bounded: [`MAX_HREFS`] hrefs in all; past it the directories used least recently are
//! forgotten. About 250 bytes an href (the href, the canonical URL parsed, its key).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::BuildHasherDefault;
use std::sync::{Mutex, PoisonError};

use rip_url::{Canonicalizer, HrefNeeds, Url, base_dir, href_needs};

use crate::frontier::{IdHasher, key};

/// Hrefs remembered at most, over all directories.
pub(crate) const MAX_HREFS: usize = 1 << 15;

/// A canonical URL that links resolved to, with its visited-set key.
#[derive(Debug)]
pub(crate) struct Link {
    pub url: Url,
    pub key: u64,
}

impl Link {
    pub(crate) fn new(url: Url) -> Self {
        Self {
            key: key(url.as_str()),
            url,
        }
    }
}

/// What resolving an href gave: a link, or nothing (the href was rejected).
type Resolved = Option<Link>;

/// The hrefs resolved in each directory, shared by a crawl's tasks.
#[derive(Debug)]
pub(crate) struct Resolutions {
    dirs: Mutex<Dirs>,
    max_hrefs: usize,
}

#[derive(Debug, Default)]
struct Dirs {
    by_name: HashMap<Box<str>, Dir>,
    /// Hrefs in `by_name`.
    hrefs: usize,
    /// Pages seen: a directory's `used` is the page it was last used for.
    clock: u64,
}

/// One directory's hrefs, by the XXH3 hash of the href (the href itself is kept and
/// compared: two hrefs with one hash share a slot, the last resolved wins).
#[derive(Debug, Default)]
struct Dir {
    hrefs: HashMap<u64, (Box<str>, Resolved), BuildHasherDefault<IdHasher>>,
    used: u64,
}

impl Default for Resolutions {
    fn default() -> Self {
        Self::with_max(MAX_HREFS)
    }
}

impl Resolutions {
    /// Remembers up to `max_hrefs` hrefs.
    pub(crate) fn with_max(max_hrefs: usize) -> Self {
        Self {
            dirs: Mutex::default(),
            max_hrefs,
        }
    }

    /// Resolves the links of one page against `base` (the page's URL or its `<base>`).
    /// The page's directory is taken out of the shared map while the page's links are
    /// resolved (no lock is held meanwhile) and put back when the [`PageLinks`] drops.
    pub(crate) fn page<'a>(&'a self, canon: &'a Canonicalizer, base: &'a Url) -> PageLinks<'a> {
        let dir_name = base_dir(base);
        let dir = self.lock().take(dir_name);
        PageLinks {
            from: self,
            canon,
            base,
            dir_name,
            dir,
            itself: None,
            whole: None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Dirs> {
        self.dirs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    fn hrefs(&self) -> usize {
        self.lock().hrefs
    }
}

impl Dirs {
    fn take(&mut self, name: &str) -> Dir {
        let dir = self.by_name.remove(name).unwrap_or_default();
        self.hrefs -= dir.hrefs.len();
        dir
    }

    /// Puts a directory back (keeping the larger when another page of it was resolved
    /// meanwhile), then forgets the directories used least recently while over `max`.
    fn put(&mut self, name: &str, mut dir: Dir, max: usize) {
        self.clock += 1;
        dir.used = self.clock;
        if let Some(other) = self.by_name.get(name) {
            if other.hrefs.len() >= dir.hrefs.len() {
                return;
            }
            let other = self.take(name);
            drop(other);
        }
        self.hrefs += dir.hrefs.len();
        self.by_name.insert(name.into(), dir);
        while self.hrefs > max {
            let Some(oldest) = (self.by_name.iter())
                .min_by_key(|(_, d)| d.used)
                .map(|(n, _)| n.clone())
            else {
                break;
            };
            drop(self.take(&oldest));
        }
    }
}

/// The links of one page being resolved; see [`Resolutions::page`].
pub(crate) struct PageLinks<'a> {
    from: &'a Resolutions,
    canon: &'a Canonicalizer,
    base: &'a Url,
    dir_name: &'a str,
    dir: Dir,
    /// What `#` resolves to, once asked.
    itself: Option<Resolved>,
    /// What the last [`HrefNeeds::Whole`] href resolved to.
    whole: Resolved,
}

impl PageLinks<'_> {
    /// The canonical URL `href` resolves to on this page, or `None` when it is rejected
    /// (as [`Canonicalizer::resolve`] says).
    pub(crate) fn resolve(&mut self, href: &str) -> Option<&Link> {
        let (canon, base) = (self.canon, self.base);
        match href_needs(href) {
            HrefNeeds::Dir => {
                let hash = xxhash_rust::xxh3::xxh3_64(href.as_bytes());
                // One directory may hold at most half of what is remembered.
                let room = self.dir.hrefs.len() < self.from.max_hrefs / 2;
                match self.dir.hrefs.entry(hash) {
                    Entry::Occupied(e) if *e.get().0 == *href => e.into_mut().1.as_ref(),
                    Entry::Occupied(mut e) => {
                        *e.get_mut() = (href.into(), resolve(canon, base, href));
                        e.into_mut().1.as_ref()
                    }
                    Entry::Vacant(e) if room => {
                        let resolved = resolve(canon, base, href);
                        e.insert((href.into(), resolved)).1.as_ref()
                    }
                    Entry::Vacant(_) => {
                        self.whole = resolve(canon, base, href);
                        self.whole.as_ref()
                    }
                }
            }
            HrefNeeds::Itself => self
                .itself
                .get_or_insert_with(|| resolve(canon, base, "#"))
                .as_ref(),
            HrefNeeds::Whole => {
                self.whole = resolve(canon, base, href);
                self.whole.as_ref()
            }
        }
    }
}

fn resolve(canon: &Canonicalizer, base: &Url, href: &str) -> Resolved {
    canon.resolve(base, href).ok().map(Link::new)
}

impl Drop for PageLinks<'_> {
    fn drop(&mut self) {
        let dir = std::mem::take(&mut self.dir);
        let max = self.from.max_hrefs;
        self.from.lock().put(self.dir_name, dir, max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn resolve_all(r: &Resolutions, base: &Url, hrefs: &[&str]) -> Vec<Option<String>> {
        let canon = Canonicalizer::default();
        let mut page = r.page(&canon, base);
        (hrefs.iter())
            .map(|h| page.resolve(h).map(|l| l.url.to_string()))
            .collect()
    }

    fn uncached(base: &Url, hrefs: &[&str]) -> Vec<Option<String>> {
        let canon = Canonicalizer::default();
        (hrefs.iter())
            .map(|h| canon.resolve(base, h).ok().map(|u| u.to_string()))
            .collect()
    }

    const HREFS: &[&str] = &[
        "b.html",
        "../up/",
        "/abs?utm_source=x",
        "//other/x",
        "HTTPS://Ex.com:443/a#f",
        "#top",
        "",
        "?q=2",
        "http:rel",
        "mailto:x",
        "http://[::1",
        " b.html ",
        "b.html",
    ];

    /// Pages of one directory and of others, through one cache, resolve as without it.
    #[test]
    fn as_resolved_without_the_cache() {
        let r = Resolutions::default();
        for base in [
            "http://h/d/p1.html",
            "http://h/d/p2.html?q=1",
            "http://h/d/",
            "http://h/d/p1.html",
            "http://h/e/p1.html",
            "https://h/d/p1.html",
            "http://h/d/sub/p.html",
        ] {
            let base = url(base);
            assert_eq!(
                resolve_all(&r, &base, HREFS),
                uncached(&base, HREFS),
                "{base}"
            );
        }
        // Remembered: the 7 Dir hrefs (" b.html " and "b.html" are two, the rejected
        // "http://[::1" is one) of each of the 4 directories.
        assert_eq!(r.hrefs(), 4 * 7);
    }

    /// Past the bound, the directories used least recently are forgotten, and what is
    /// resolved stays right.
    #[test]
    fn bounded() {
        let r = Resolutions::with_max(20);
        for i in 0..50 {
            let base = url(&format!("http://h/d{}/p.html", i % 7));
            let hrefs: Vec<String> = (0..9).map(|j| format!("x{j}.html")).collect();
            let hrefs: Vec<&str> = hrefs.iter().map(String::as_str).collect();
            assert_eq!(resolve_all(&r, &base, &hrefs), uncached(&base, &hrefs));
            assert!(r.hrefs() <= 20);
        }
        // One directory keeps at most half the bound.
        let base = url("http://h/big/p.html");
        let hrefs: Vec<String> = (0..30).map(|j| format!("y{j}.html")).collect();
        let hrefs: Vec<&str> = hrefs.iter().map(String::as_str).collect();
        assert_eq!(resolve_all(&r, &base, &hrefs), uncached(&base, &hrefs));
        assert_eq!(r.hrefs(), 10 + 9);
    }
}
