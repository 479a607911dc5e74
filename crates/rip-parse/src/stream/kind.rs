//! What the tree builder's rules need to know of an HTML element's name, as bits.

use crate::tag::Tag;

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

/// The bits of an HTML element whose tag is `tag` ([`Tag::Other`]: none).
pub fn kind(tag: Tag) -> u16 {
    use Tag::*;
    match tag {
        A | B | Big | Code | Em | Font | I | Nobr | S | Small | Strike | Strong | Tt | U => {
            FORMATTING
        }
        P => SPECIAL | IMPLIED_END | CLOSES_P,
        Li | Dd | Dt => SPECIAL | IMPLIED_END,
        Optgroup | Option | Rb | Rp | Rt | Rtc => IMPLIED_END,
        H1 | H2 | H3 | H4 | H5 | H6 => SPECIAL | CLOSES_P | HEADING,
        Address | Article | Aside | Blockquote | Center | Details | Dir | Div | Dl | Fieldset
        | Figcaption | Figure | Footer | Header | Hgroup | Main | Menu | Nav | Ol | Section
        | Summary | Ul | Pre | Listing | Form | Xmp | Plaintext => SPECIAL | CLOSES_P,
        // Not in html5ever's list of special elements (nor is `keygen`).
        Dialog | Search => CLOSES_P,
        Keygen => VOID,
        Area | Base | Basefont | Bgsound | Br | Col | Embed | Img | Input | Link | Meta | Param
        | Source | Track | Wbr | Frame => SPECIAL | VOID,
        Hr => SPECIAL | VOID | CLOSES_P,
        Td | Th => SPECIAL | MARKER | SCOPE | TABLE_MODE,
        Caption => SPECIAL | MARKER | SCOPE,
        Applet | Marquee | Object => SPECIAL | MARKER | SCOPE,
        Template => SPECIAL | MARKER | SCOPE | TABLE_MODE | TEMPLATE,
        Table => SPECIAL | SCOPE | TABLE_MODE,
        Tbody | Thead | Tfoot | Tr => SPECIAL | TABLE_MODE,
        Html => SPECIAL | SCOPE,
        Body | Button | Colgroup | Frameset | Head | Iframe | Noembed | Noframes | Noscript
        | Script | Select | Style | Textarea | Title | Isindex => SPECIAL,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`kind`] as it was written first, by name.
    fn by_name(name: &str) -> u16 {
        match name {
            "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small"
            | "strike" | "strong" | "tt" | "u" => FORMATTING,
            "p" => SPECIAL | IMPLIED_END | CLOSES_P,
            "li" | "dd" | "dt" => SPECIAL | IMPLIED_END,
            "optgroup" | "option" | "rb" | "rp" | "rt" | "rtc" => IMPLIED_END,
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => SPECIAL | CLOSES_P | HEADING,
            "address" | "article" | "aside" | "blockquote" | "center" | "details" | "dir"
            | "div" | "dl" | "fieldset" | "figcaption" | "figure" | "footer" | "header"
            | "hgroup" | "main" | "menu" | "nav" | "ol" | "section" | "summary" | "ul" | "pre"
            | "listing" | "form" | "xmp" | "plaintext" => SPECIAL | CLOSES_P,
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

    #[test]
    fn a_tags_bits_are_its_names() {
        for &tag in Tag::ALL {
            assert_eq!(kind(tag), by_name(tag.name()), "{tag:?}");
        }
        // Every name with bits has a tag.
        for name in crate::tag::tests::names_to_try() {
            assert_eq!(kind(Tag::of(name)), by_name(name), "{name}");
        }
        assert_eq!(kind(Tag::Other), 0);
    }
}
