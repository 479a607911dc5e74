//! A page as a sequence of events: an element opens, text, an element closes.
//!
//! Generic extraction and Markdown are written as [`Visitor`]s of these events, so
//! that one piece of code serves both ways of reading a page: a walk over the tree
//! html5ever built ([`walk_tree`]), and the streaming pass that builds no tree
//! ([`crate::stream`]). The two give the same events for the same page (the
//! streaming pass gives up on a page where it could not), so they give the same doc.

use ego_tree::NodeRef;
use ego_tree::iter::Edge;
use scraper::Node;

use crate::dom::Info;
use crate::tag::Tag;

/// An attribute as the streaming pass read it: name (lower case) and value (decoded).
pub type Attr<'a> = rip_html::Attr<'a>;

/// An element on the streaming pass's stack of open elements.
#[derive(Debug)]
pub struct OpenElem<'a> {
    /// Its local name, lower case.
    pub name: std::borrow::Cow<'a, str>,
    /// Its tag ([`Tag::Other`] for an element of another namespace than HTML's).
    pub tag: Tag,
    /// True for an element of the HTML namespace.
    pub html: bool,
    /// What the tree construction rules need to know of it (`stream::kind`).
    pub kind: u16,
    /// What the text walks need to know of it.
    pub info: Info,
    /// Its attributes, in [`Path::attrs`].
    pub attrs: std::ops::Range<usize>,
}

impl OpenElem<'_> {
    /// True for the HTML element `tag` (one of the tags, not [`Tag::Other`]).
    pub fn is(&self, tag: Tag) -> bool {
        debug_assert_ne!(tag, Tag::Other);
        self.html && self.tag == tag
    }

    /// True for the HTML element named `name`, whose tag is `tag` (the name is compared
    /// only for [`Tag::Other`]).
    pub fn is_named(&self, tag: Tag, name: &str) -> bool {
        self.html && self.tag == tag && (tag != Tag::Other || self.name == name)
    }
}

/// The open elements of the streaming pass, root first: the element an event is about
/// and all its ancestors (what a CSS selector without sibling combinators needs).
#[derive(Clone, Copy, Debug)]
pub struct Path<'e> {
    /// The open elements; the last is the element itself.
    pub elems: &'e [OpenElem<'e>],
    /// Their attributes.
    pub attrs: &'e [Attr<'e>],
}

impl<'e> Path<'e> {
    /// The element at `i` as an event shows it.
    pub fn elem(&self, i: usize) -> Elem<'e> {
        let o = &self.elems[i];
        Elem::with_info(&o.name, o.tag, o.html, o.info, &self.attrs[o.attrs.clone()])
    }
}

/// An element, as an event shows it.
#[derive(Clone, Copy)]
pub struct Elem<'e> {
    /// Its local name, lower case.
    pub name: &'e str,
    /// Its tag: [`Tag::Other`] for a name without one, and for an element of another
    /// namespace than HTML's.
    pub tag: Tag,
    /// True for an element of the HTML namespace (not SVG or MathML).
    pub html: bool,
    /// What the text walks need to know of it (the default for other namespaces).
    pub info: Info,
    attrs: Attrs<'e>,
    /// Its ancestors and itself, in the streaming pass.
    pub path: Option<Path<'e>>,
}

#[derive(Clone, Copy)]
enum Attrs<'e> {
    Tree(&'e scraper::node::Element),
    Stream(&'e [Attr<'e>]),
}

impl<'e> Elem<'e> {
    /// An element of the streaming pass.
    pub fn streamed(name: &'e str, html: bool, attrs: &'e [Attr<'e>]) -> Self {
        let (tag, info) = if html {
            let tag = Tag::of(name);
            (tag, Info::of_attrs(tag, attrs))
        } else {
            (Tag::Other, Info::default())
        };
        Self::with_info(name, tag, html, info, attrs)
    }

    fn with_info(name: &'e str, tag: Tag, html: bool, info: Info, attrs: &'e [Attr<'e>]) -> Self {
        Self {
            name,
            tag,
            html,
            info,
            attrs: Attrs::Stream(attrs),
            path: None,
        }
    }

    /// The element on top of a streaming pass's stack, with its ancestors.
    pub fn on_path(path: Path<'e>) -> Self {
        let mut el = path.elem(path.elems.len() - 1);
        el.path = Some(path);
        el
    }

    /// An element of a parsed tree.
    pub fn of_tree(el: &'e scraper::node::Element) -> Self {
        let html = el.name.ns == html5ever::ns!(html);
        let (tag, info) = if html {
            let tag = Tag::of(&el.name.local);
            (tag, tree_info(el, tag))
        } else {
            (Tag::Other, Info::default())
        };
        Self::of_tree_with(el, tag, info)
    }

    /// An element of a parsed tree whose [`Tag`] and [`Info`] are known.
    fn of_tree_with(el: &'e scraper::node::Element, tag: Tag, info: Info) -> Self {
        Self {
            name: &el.name.local,
            tag,
            html: el.name.ns == html5ever::ns!(html),
            info,
            attrs: Attrs::Tree(el),
            path: None,
        }
    }

    /// The value of the attribute `name` (in no namespace).
    pub fn attr(&self, name: &str) -> Option<&'e str> {
        match self.attrs {
            Attrs::Tree(el) => crate::dom::attr(el, name),
            Attrs::Stream(attrs) => attrs
                .iter()
                .find(|(n, _)| n.as_ref() == name)
                .map(|(_, v)| v.as_ref()),
        }
    }

    /// The local name when this is an HTML element.
    pub fn html_name(&self) -> Option<&'e str> {
        self.html.then_some(self.name)
    }

    /// The tag when this is an HTML element.
    pub fn html_tag(&self) -> Option<Tag> {
        self.html.then_some(self.tag)
    }
}

/// What reads a page's events.
pub trait Visitor {
    /// An element opens (its children follow, then its [`Visitor::close`]).
    fn open(&mut self, el: &Elem<'_>);
    /// A run of text (a text node may come in several runs).
    fn text(&mut self, text: &str);
    /// An element closes.
    fn close(&mut self, el: &Elem<'_>);
}

/// Two visitors reading the same events.
impl<A: Visitor, B: Visitor> Visitor for (A, B) {
    fn open(&mut self, el: &Elem<'_>) {
        self.0.open(el);
        self.1.open(el);
    }
    fn text(&mut self, text: &str) {
        self.0.text(text);
        self.1.text(text);
    }
    fn close(&mut self, el: &Elem<'_>) {
        self.0.close(el);
        self.1.close(el);
    }
}

/// A visitor that may not be there.
impl<V: Visitor> Visitor for Option<V> {
    fn open(&mut self, el: &Elem<'_>) {
        if let Some(v) = self {
            v.open(el);
        }
    }
    fn text(&mut self, text: &str) {
        if let Some(v) = self {
            v.text(text);
        }
    }
    fn close(&mut self, el: &Elem<'_>) {
        if let Some(v) = self {
            v.close(el);
        }
    }
}

/// A visitor lent out.
impl<V: Visitor> Visitor for &mut V {
    fn open(&mut self, el: &Elem<'_>) {
        (**self).open(el);
    }
    fn text(&mut self, text: &str) {
        (**self).text(text);
    }
    fn close(&mut self, el: &Elem<'_>) {
        (**self).close(el);
    }
}

/// Gives `visitor` the events of the subtree at `root` (`root` included), in
/// document order. Comments, doctypes and the like give no event.
pub fn walk_tree(root: NodeRef<'_, Node>, visitor: &mut impl Visitor) {
    // The open elements' tag and info, worked out when they open, for their close.
    let mut open = Vec::new();
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) => {
                    let el = Elem::of_tree(el);
                    open.push((el.tag, el.info));
                    visitor.open(&el);
                }
                Node::Text(t) => visitor.text(t),
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(el) = node.value() {
                    let (tag, info) = open.pop().unwrap_or_default();
                    visitor.close(&Elem::of_tree_with(el, tag, info));
                }
            }
        }
    }
}

/// [`Info::of`] an HTML element of a tree (whose tag is `tag`): its `hidden` and first
/// `role` attributes (in no namespace) found in one pass, their names compared as atoms.
fn tree_info(el: &scraper::node::Element, tag: Tag) -> Info {
    let mut hidden = false;
    let mut role = None;
    let mut item = false;
    let mut unseen = false;
    for (q, v) in &el.attrs {
        if q.ns != html5ever::ns!() {
            continue;
        }
        if q.local == html5ever::local_name!("hidden") {
            hidden = true;
        } else if q.local == html5ever::local_name!("style") {
            unseen |= crate::dom::style_hides(v);
        } else if q.local == html5ever::local_name!("aria-hidden") {
            unseen |= v.trim() == "true";
        } else if q.local == html5ever::local_name!("role") && role.is_none() {
            role = Some(&**v);
        } else if q.local == html5ever::local_name!("itemprop")
            || q.local == html5ever::local_name!("itemscope")
        {
            item = true;
        }
    }
    Info::of(tag, hidden, role)
        .with_item(item)
        .with_unseen(unseen)
}

/// Counts the nesting of elements below a visitor's root, so that a visitor that
/// starts at some element knows when that element closes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Depth(usize);

impl Depth {
    /// An element opened.
    pub fn open(&mut self) {
        self.0 += 1;
    }

    /// An element closed: true when it was the root (depth back to zero).
    pub fn close(&mut self) -> bool {
        self.0 = self.0.saturating_sub(1);
        self.0 == 0
    }

    /// True inside the root.
    pub fn inside(&self) -> bool {
        self.0 > 0
    }
}
