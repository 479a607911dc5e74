//! The decision: does a fetched page's content need script? Each signal is a figure
//! measured in the HTML as sent ([`crate::measure`]) against a bound that holds for every
//! site; none names a site or a page.
//!
//! A page with no script that runs never needs the browser. Otherwise the first signal
//! that holds decides, in this order:
//!
//! | signal | holds when |
//! |---|---|
//! | `emptyAppRoot` | an application root (`<div id=app\|root\|__next\|…>`) holds under 40 characters of text |
//! | `tinyText` | the body holds under 64 characters of text while its scripts are many (3 or more) or large (10 KB inline) |
//! | `noscriptAsks` | a `<noscript>` asks for JavaScript and the body holds under 200 characters |
//! | `dataIsland` | JSON data islands hold 100 characters of text or more, over twice the body's |
//! | `jsonEndpoint` | inline scripts load data (`fetch(`, `XMLHttpRequest`, …) and something below is empty |
//! | `emptyContainer` | a list or table body (`ul`, `ol`, `tbody`, `dl`) holds no item at all |
//! | `emptyItems` | two list items, rows or cards or more hold no text: a template waiting for its data |
//! | `placeholders` | elements marked as placeholders (`skeleton`, `placeholder`, `loading`, …, `aria-busy`) |
//!
//! The bounds lean to rendering: a page wrongly sent to the browser costs a second and
//! gives the same document; a page wrongly kept from it loses its content.

use rip_core::PageFigures;

use crate::measure::measure;

/// An application root with less text than this is empty (a "Loading…" fits).
const APP_ROOT_MAX_CHARS: u32 = 40;
/// A body with less text than this, and many or large scripts, is a shell.
const TINY_TEXT_CHARS: u32 = 64;
/// Scripts that make a page script-heavy: this many, or this many inline bytes.
const MANY_SCRIPTS: u32 = 3;
const LARGE_SCRIPT_BYTES: u32 = 10_000;
/// A `<noscript>` asking for JavaScript matters on a body with less text than this.
const NOSCRIPT_TEXT_CHARS: u32 = 200;
/// JSON islands with at least this much text, and over twice the body's, hold the content.
const ISLAND_MIN_CHARS: u32 = 100;

/// What the page's figures say, and which figure said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// No script runs on the page: its content is what was sent.
    NoScript,
    /// Scripts run, but no signal of content left to them holds.
    ContentPresent,
    /// The application root is (nearly) empty.
    EmptyAppRoot,
    /// Almost no text, many or large scripts.
    TinyText,
    /// A `<noscript>` asks for JavaScript on a page with little text.
    NoscriptAsks,
    /// JSON data islands hold the text the body lacks.
    DataIsland,
    /// Inline scripts load data, and something is empty.
    JsonEndpoint,
    /// A list or table body with no item.
    EmptyContainer,
    /// List items, rows or cards with no text.
    EmptyItems,
    /// Elements marked as placeholders or skeletons.
    Placeholders,
}

impl Signal {
    /// Whether the page needs script for its content.
    pub fn needs_script(self) -> bool {
        !matches!(self, Signal::NoScript | Signal::ContentPresent)
    }

    /// Its name on the wire (`renderedBecause.signal`).
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::NoScript => "noScript",
            Signal::ContentPresent => "contentPresent",
            Signal::EmptyAppRoot => "emptyAppRoot",
            Signal::TinyText => "tinyText",
            Signal::NoscriptAsks => "noscriptAsks",
            Signal::DataIsland => "dataIsland",
            Signal::JsonEndpoint => "jsonEndpoint",
            Signal::EmptyContainer => "emptyContainer",
            Signal::EmptyItems => "emptyItems",
            Signal::Placeholders => "placeholders",
        }
    }
}

/// A page judged: the signal that decided and the figures measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judgement {
    /// The signal that decided.
    pub signal: Signal,
    /// What was measured.
    pub figures: PageFigures,
}

impl Judgement {
    /// Whether the page needs script for its content.
    pub fn needs_script(&self) -> bool {
        self.signal.needs_script()
    }
}

/// Judges a fetched HTML page (its text, decoded).
pub fn judge(html: &str) -> Judgement {
    let figures = measure(html);
    Judgement {
        signal: signal_of(&figures),
        figures,
    }
}

/// The first signal that holds for `f`.
pub fn signal_of(f: &PageFigures) -> Signal {
    if f.scripts == 0 {
        return Signal::NoScript;
    }
    let empties = f.empty_containers + f.empty_items + f.placeholders;
    if f.app_root_chars.is_some_and(|c| c < APP_ROOT_MAX_CHARS) {
        Signal::EmptyAppRoot
    } else if f.text_chars < TINY_TEXT_CHARS
        && (f.scripts >= MANY_SCRIPTS || f.script_bytes >= LARGE_SCRIPT_BYTES)
    {
        Signal::TinyText
    } else if f.noscript_asks && f.text_chars < NOSCRIPT_TEXT_CHARS {
        Signal::NoscriptAsks
    } else if f.island_chars >= ISLAND_MIN_CHARS && f.island_chars > 2 * f.text_chars {
        Signal::DataIsland
    } else if f.endpoints > 0 && empties > 0 {
        Signal::JsonEndpoint
    } else if f.empty_containers > 0 {
        Signal::EmptyContainer
    } else if f.empty_items >= 2 {
        Signal::EmptyItems
    } else if f.placeholders > 0 {
        Signal::Placeholders
    } else {
        Signal::ContentPresent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(html: &str) -> &'static str {
        judge(html).signal.as_str()
    }

    const ARTICLE: &str = "<h1>The ash wyrm</h1><p>A wyrm of the ash wastes, feared by every \
        caravan that crosses the grey dunes; its breath turns sand to glass.</p>";

    #[test]
    fn server_rendered_pages_do_not_need_script() {
        assert_eq!(signal(&format!("<body>{ARTICLE}</body>")), "noScript");
        let with_scripts = format!(
            "<body>{ARTICLE}<ul><li>One</li><li>Two</li></ul>\
             <script src=/js/analytics.js></script><script>window.dataLayer=[]</script>\
             <noscript><img src=/pixel.gif></noscript></body>"
        );
        assert_eq!(signal(&with_scripts), "contentPresent");
        let ssr_next = format!(
            "<div id=__next>{ARTICLE}</div><script id=__NEXT_DATA__ type=application/json>\
             {{\"props\":{{\"title\":\"The ash wyrm\"}}}}</script><script src=/_next/main.js></script>"
        );
        assert_eq!(
            signal(&ssr_next),
            "contentPresent",
            "a server-rendered Next.js page"
        );
    }

    #[test]
    fn each_signal_is_found_by_its_figure() {
        let s = "<script src=/app.js></script>";
        assert_eq!(signal(&format!("<div id=root></div>{s}")), "emptyAppRoot");
        assert_eq!(
            signal(&format!("<div id=app><p>Loading…</p></div>{s}")),
            "emptyAppRoot"
        );
        assert_eq!(
            signal(&format!("<p>Shop</p>{s}{s}{s}")),
            "tinyText",
            "three scripts, almost no text"
        );
        assert_eq!(
            signal(&format!(
                "<h1>Market</h1><noscript>Please enable JavaScript to see the \
                 products.</noscript>{s}"
            )),
            "noscriptAsks"
        );
        let island = format!(
            "<h1>Bestiary</h1><script type=application/json id=data>{{\"items\":[{}]}}</script>{s}",
            ["\"A wyrm of the grey ash wastes\""; 6].join(",")
        );
        assert_eq!(signal(&island), "dataIsland");
        assert_eq!(
            signal(&format!(
                "{ARTICLE}<h2>Reviews</h2><ul id=reviews></ul>\
                 <script>fetch('/api/reviews.json').then(r=>r.json())</script>"
            )),
            "jsonEndpoint"
        );
        assert_eq!(
            signal(&format!("{ARTICLE}<ul class=products></ul>{s}")),
            "emptyContainer"
        );
        assert_eq!(
            signal(&format!(
                "{ARTICLE}<ul><li>One</li><li class=item></li><li class=item></li></ul>{s}"
            )),
            "emptyItems"
        );
        assert_eq!(
            signal(&format!(
                "{ARTICLE}<div class=\"card skeleton-card\"><p>x</p></div>{s}"
            )),
            "placeholders"
        );
    }

    #[test]
    fn the_same_empty_list_without_a_script_is_left_alone() {
        assert_eq!(
            signal(&format!("{ARTICLE}<ul class=products></ul>")),
            "noScript"
        );
    }
}
