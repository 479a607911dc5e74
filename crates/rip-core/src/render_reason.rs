//! Why a page went to the browser: the `renderedBecause` object of a URL's records.

use serde::{Deserialize, Serialize};

/// Why a page was sent to the browser, or (with [`RenderedBecause::learnt`]) why its URL
/// pattern is. Written by the stage that decided (`rip-route`, `rip-discover`) on the
/// `ref` it sends on, and carried from there to the rendered `page` and its `doc`.
///
/// Exactly one of three causes: a render rule ([`RenderedBecause::rule`]); a signal
/// measured in the fetched HTML ([`RenderedBecause::signal`], with the figures measured);
/// or a decision learnt for the URL's pattern ([`RenderedBecause::learnt`], with the
/// signal and figures of the page that last confirmed it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderedBecause {
    /// The render rule that matched the page (its name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The signal measured in the fetched HTML (`--render auto`): `emptyAppRoot`,
    /// `noscriptAsks`, `dataIsland`, `jsonEndpoint`, `emptyContainer` or `emptyItems`
    /// (see `rip-adaptive`). A string, not an enum, so a reader older than a new signal
    /// still reads the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The URL pattern whose pages were found to need script (`/items/item-{n}.html`):
    /// this page was sent without being checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learnt: Option<String>,
    /// With `learnt`: how many pages of the pattern agreed since it was last checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreed: Option<u32>,
    /// What was measured in the HTML as sent (with `signal`).
    #[serde(flatten)]
    pub figures: PageFigures,
}

/// What `rip-adaptive` measures in a fetched HTML page (zeros are left out on the wire).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageFigures {
    /// Visible text in `<body>`, in characters other than white space (script, style,
    /// template and noscript content left out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub text_chars: u32,
    /// Scripts that run: `<script>` elements other than data (`application/json`, …).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scripts: u32,
    /// Bytes of inline script in them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub script_bytes: u32,
    /// Text in the application root (`<div id=app|root|__next|…>`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_root_chars: Option<u32>,
    /// Characters of text held in JSON data islands (`<script type=application/json>`,
    /// `__NEXT_DATA__`): string values of three characters or more.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub island_chars: u32,
    /// JSON endpoints the inline scripts ask for (`fetch("….json")`, `XMLHttpRequest`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub endpoints: u32,
    /// List and table containers (`ul`, `ol`, `tbody`, `dl`) holding no item.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub empty_containers: u32,
    /// List items, table rows and cards (`li`, `tr`, `article`) holding no text.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub empty_items: u32,
    /// List items, table rows and cards, empty or not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub items: u32,
    /// Elements marked as placeholders (class `skeleton`, `placeholder`, `loading`, …).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub placeholders: u32,
    /// A `<noscript>` whose text asks for JavaScript.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub noscript_asks: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
