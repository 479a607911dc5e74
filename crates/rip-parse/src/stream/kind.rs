//! What the tree builder's rules need to know of an HTML element's name, as bits.

/// Bits of [`kind`].
pub const SPECIAL: u16 = 1;
/// `a`, `b`, `i`, …: reopened by the tree builder when closed out of turn.
pub const FORMATTING: u16 = 1 << 1;
/// `td`, `th`, `caption`, `template`, `applet`, `object`, `marquee`.
pub const MARKER: u16 = 1 << 2;
/// Has no content and no end tag.
pub const VOID: u16 = 1 << 3;
/// Closed by "generate implied end tags" (`p`, `li`, `dd`, `option`, …).
pub const IMPLIED_END: u16 = 1 << 4;
/// Its start tag closes an open `p`.
pub const CLOSES_P: u16 = 1 << 5;
/// Bounds the default scope (`applet caption html table td th marquee object template`).
pub const SCOPE: u16 = 1 << 6;
/// `table`, `tbody`, `thead`, `tfoot`, `tr`, `td`, `th`, `template`: decide the mode.
pub const TABLE_MODE: u16 = 1 << 7;
/// `h1` to `h6`.
pub const HEADING: u16 = 1 << 8;
/// `template`.
pub const TEMPLATE: u16 = 1 << 9;

/// The bits of an HTML element named `name` (lower case).
pub fn kind(name: &str) -> u16 {
    match name {
        "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small" | "strike"
        | "strong" | "tt" | "u" => FORMATTING,
        "p" => SPECIAL | IMPLIED_END | CLOSES_P,
        "li" | "dd" | "dt" => SPECIAL | IMPLIED_END,
        "optgroup" | "option" | "rb" | "rp" | "rt" | "rtc" => IMPLIED_END,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => SPECIAL | CLOSES_P | HEADING,
        "address" | "article" | "aside" | "blockquote" | "center" | "details" | "dir" | "div"
        | "dl" | "fieldset" | "figcaption" | "figure" | "footer" | "header" | "hgroup" | "main"
        | "menu" | "nav" | "ol" | "section" | "summary" | "ul" | "pre" | "listing" | "form"
        | "xmp" | "plaintext" => SPECIAL | CLOSES_P,
        // Not in html5ever's list of special elements (nor is `keygen`).
        "dialog" | "search" => CLOSES_P,
        "keygen" => VOID,
        "area" | "base" | "basefont" | "bgsound" | "br" | "col" | "embed" | "img" | "input"
        | "link" | "meta" | "param" | "source" | "track" | "wbr" | "frame" => SPECIAL | VOID,
        "hr" => SPECIAL | VOID | CLOSES_P,
        "td" | "th" => SPECIAL | MARKER | SCOPE | TABLE_MODE,
        "caption" => SPECIAL | MARKER | SCOPE,
        "applet" | "marquee" | "object" => SPECIAL | MARKER | SCOPE,
        "template" => SPECIAL | MARKER | SCOPE | TABLE_MODE | TEMPLATE,
        "table" => SPECIAL | SCOPE | TABLE_MODE,
        "tbody" | "thead" | "tfoot" | "tr" => SPECIAL | TABLE_MODE,
        "html" => SPECIAL | SCOPE,
        "body" | "button" | "colgroup" | "frameset" | "head" | "iframe" | "noembed"
        | "noframes" | "noscript" | "script" | "select" | "style" | "textarea" | "title"
        | "isindex" => SPECIAL,
        _ => 0,
    }
}
