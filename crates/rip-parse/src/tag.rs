//! HTML element names as a small enum, worked out once per tag: the tree construction
//! rules, [`crate::dom::Info`] and the generic walks match an element by its [`Tag`]
//! (an integer) instead of comparing its name with lists of strings at every event.

/// Up to 8 bytes of a name as one integer (little endian, zero padded): a name of up
/// to 8 bytes is matched by one integer comparison. Names hold no NUL (the streaming
/// pass gives a page with one to the tree), so two names never pack alike.
const fn pack(b: &[u8]) -> u64 {
    let mut v = 0u64;
    let mut i = 0;
    while i < b.len() {
        v |= (b[i] as u64) << (8 * i);
        i += 1;
    }
    v
}

macro_rules! tags {
    (short: [$($short:ident = $sname:literal,)*] long: [$($long:ident = $lname:literal,)*]) => {
        /// An HTML element's name, when it is one the tree construction rules or the
        /// text walks tell apart; [`Tag::Other`] for any other name.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub enum Tag {
            /// A name not listed here: compare the name itself.
            #[default]
            Other,
            $(#[doc = concat!("`", $sname, "`")] $short,)*
            $(#[doc = concat!("`", $lname, "`")] $long,)*
        }

        /// The packed names of the short tags, as patterns.
        struct Packed;

        #[allow(non_upper_case_globals)]
        impl Packed {
            $(const $short: u64 = pack($sname.as_bytes());)*
        }

        impl Tag {
            /// Every tag but [`Tag::Other`].
            pub const ALL: &[Tag] = &[$(Tag::$short,)* $(Tag::$long,)*];

            /// How many tags there are, [`Tag::Other`] included (`tag as usize` is below).
            pub const COUNT: usize = Tag::ALL.len() + 1;

            /// The element name (lower case); `""` for [`Tag::Other`].
            pub fn name(self) -> &'static str {
                match self {
                    Tag::Other => "",
                    $(Tag::$short => $sname,)*
                    $(Tag::$long => $lname,)*
                }
            }

            fn of_packed(v: u64) -> Tag {
                match v {
                    $(Packed::$short => Tag::$short,)*
                    _ => Tag::Other,
                }
            }

            fn of_long(name: &str) -> Tag {
                match name {
                    $($lname => Tag::$long,)*
                    _ => Tag::Other,
                }
            }
        }
    };
}

tags! {
    short: [
    A = "a", Abbr = "abbr", Address = "address", Applet = "applet", Area = "area",
    Article = "article", Aside = "aside", B = "b", Base = "base", Basefont = "basefont",
    Bgsound = "bgsound", Big = "big", Body = "body", Br = "br", Button = "button",
    Canvas = "canvas", Caption = "caption", Center = "center", Code = "code", Col = "col",
    Colgroup = "colgroup", Datalist = "datalist", Dd = "dd", Desc = "desc",
    Details = "details", Dialog = "dialog", Dir = "dir", Div = "div", Dl = "dl", Dt = "dt",
    Em = "em", Embed = "embed", Fieldset = "fieldset", Figure = "figure", Font = "font",
    Footer = "footer", Form = "form", Frame = "frame", Frameset = "frameset", H1 = "h1",
    H2 = "h2", H3 = "h3", H4 = "h4", H5 = "h5", H6 = "h6", Head = "head", Header = "header",
    Hgroup = "hgroup", Hr = "hr", Html = "html", I = "i", Iframe = "iframe", Image = "image",
    Img = "img", Input = "input", Isindex = "isindex", Kbd = "kbd", Keygen = "keygen",
    Legend = "legend", Li = "li", Link = "link", Listing = "listing", Main = "main",
    Marquee = "marquee", Math = "math", Menu = "menu", Meta = "meta", Nav = "nav",
    Nobr = "nobr", Noembed = "noembed", Noframes = "noframes", Noscript = "noscript",
    Object = "object", Ol = "ol", Optgroup = "optgroup", Option = "option", P = "p",
    Param = "param", Pre = "pre", Rb = "rb", Rp = "rp", Rt = "rt", Rtc = "rtc", Ruby = "ruby",
    S = "s", Samp = "samp", Script = "script", Search = "search", Section = "section",
    Select = "select", Small = "small", Source = "source", Span = "span", Strike = "strike",
    Strong = "strong", Style = "style", Sub = "sub", Summary = "summary", Sup = "sup",
    Svg = "svg", Table = "table", Tbody = "tbody", Td = "td", Template = "template",
    Textarea = "textarea", Tfoot = "tfoot", Th = "th", Thead = "thead", Title = "title",
    Tr = "tr", Track = "track", Tt = "tt", U = "u", Ul = "ul", Var = "var", Wbr = "wbr",
    Xmp = "xmp",
    ]
    long: [
    Blockquote = "blockquote", Figcaption = "figcaption", Foreignobject = "foreignobject",
    Plaintext = "plaintext",
    ]
}

impl Tag {
    /// The tag of the element name `name` (lower case, as the tokenizer and html5ever
    /// give HTML names): a name of up to 8 bytes is packed into an integer and matched
    /// as one, a longer one compared as a string.
    pub fn of(name: &str) -> Tag {
        let b = name.as_bytes();
        if b.len() > 8 {
            return Tag::of_long(name);
        }
        let mut v = 0u64;
        for (i, &c) in b.iter().enumerate() {
            v |= u64::from(c) << (8 * i);
        }
        Tag::of_packed(v)
    }

    /// True for `h1` to `h6`.
    pub fn is_heading(self) -> bool {
        matches!(
            self,
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Element names to try a table by name on: every HTML element name, and some
    /// that are not.
    pub(crate) fn names_to_try() -> Vec<&'static str> {
        let mut names: Vec<&str> = "a abbr acronym address applet area article aside audio \
            b base basefont bdi bdo bgsound big blink blockquote body br button canvas \
            caption center cite code col colgroup data datalist dd del desc details dfn \
            dialog dir div dl dt em embed fieldset figcaption figure font footer \
            foreignobject form frame frameset h1 h2 h3 h4 h5 h6 h7 h0 hh head header \
            hgroup hr html i iframe image img input ins isindex kbd keygen label legend li \
            link listing main map mark marquee math menu menuitem meta meter multicol nav \
            nextid nobr noembed noframes noscript object ol optgroup option output p param \
            picture plaintext pre progress q rb rp rt rtc ruby s samp script search section \
            select slot small source spacer span strike strong style sub summary sup svg \
            table tbody td template textarea tfoot th thead time title tr track tt u ul var \
            video wbr xmp x-custom"
            .split_ascii_whitespace()
            .collect();
        names.push("");
        names
    }

    #[test]
    fn a_name_gives_its_tag_and_any_other_name_other() {
        for &tag in Tag::ALL {
            assert_eq!(Tag::of(tag.name()), tag, "{tag:?}");
            assert_ne!(tag, Tag::Other);
        }
        // Every tag has a name of its own.
        let mut names: Vec<&str> = Tag::ALL.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Tag::ALL.len());
        // Prefixes, extensions, upper case, NUL padding, other lengths: not tags.
        for name in [
            "",
            "d",
            "di",
            "divx",
            "DIV",
            "Div",
            "\0div",
            "h7",
            "h0",
            "hh",
            "blockquot",
            "blockquotes",
            "figcaption\0",
            "foreignObject",
            "x-custom",
            "scripts",
            "templat",
            "template1",
            "\u{e9}",
            "a\u{e9}",
        ] {
            assert_eq!(Tag::of(name), Tag::Other, "{name:?}");
        }
    }

    #[test]
    fn headings_are_h1_to_h6() {
        let headings: Vec<&str> = Tag::ALL
            .iter()
            .filter(|t| t.is_heading())
            .map(|t| t.name())
            .collect();
        assert_eq!(headings, ["h1", "h2", "h3", "h4", "h5", "h6"]);
    }
}
