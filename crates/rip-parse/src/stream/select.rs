//! CSS selectors in the streaming pass: those that need only an element, its
//! attributes and its ancestors (type, `#id`, `.class`, `[attr…]`, `:not()`, `:is()`,
//! `:where()`, `:root`, descendant and child combinators) are matched against the
//! stack of open elements with the `selectors` crate that scraper uses, so a match is
//! a match in both paths. Sibling combinators, `:has()`, `:nth-*`, `:empty` and the
//! like need a tree: [`StreamSelector::parse`] refuses them.

use html5ever::{Namespace, ns};
use scraper::selector::{CssLocalName, CssString, Parser, Simple};
use selectors::attr::{AttrSelectorOperation, CaseSensitivity, NamespaceConstraint};
use selectors::bloom::BloomFilter;
use selectors::matching::{self, ElementSelectorFlags, MatchingContext, SelectorCaches};
use selectors::parser::{Combinator, Component, ParseRelative, Selector, SelectorList};
use selectors::{Element, OpaqueElement};

use crate::visit::{Elem, Path};

/// A selector the streaming pass can match.
#[derive(Debug, Clone)]
pub struct StreamSelector {
    list: SelectorList<Simple>,
    /// What the rightmost element of every selector of the list must be, when they
    /// agree: a quick test before the full match.
    name: Option<String>,
}

impl StreamSelector {
    /// `css` compiled for the streaming pass; `None` when it needs a tree (or is not
    /// a selector at all: the rules compiler reports that).
    pub fn parse(css: &str) -> Option<Self> {
        let mut parser = cssparser::Parser::new(css);
        let list = SelectorList::parse(&Parser, &mut parser, ParseRelative::No).ok()?;
        if !list.slice().iter().all(streamable) {
            return None;
        }
        let names: Vec<Option<String>> = list.slice().iter().map(rightmost_name).collect();
        let name = match names.split_first() {
            Some((first, rest)) if rest.iter().all(|n| n == first) => first.clone(),
            _ => None,
        };
        Some(Self { list, name })
    }

    /// True when the element on top of `el`'s path matches.
    pub fn matches(&self, el: &Elem<'_>) -> bool {
        if let Some(name) = &self.name
            && name != el.name
        {
            return false;
        }
        let Some(path) = el.path else { return false };
        let top = OnStack {
            path,
            i: path.elems.len() - 1,
        };
        let mut caches = SelectorCaches::default();
        let mut context = MatchingContext::new(
            matching::MatchingMode::Normal,
            None,
            &mut caches,
            matching::QuirksMode::NoQuirks,
            matching::NeedsSelectorFlags::No,
            matching::MatchingForInvalidation::No,
        );
        self.list
            .slice()
            .iter()
            .any(|s| matching::matches_selector(s, 0, None, &top, &mut context))
    }
}

/// True when every part of `s` can be matched from an element and its ancestors.
fn streamable(s: &Selector<Simple>) -> bool {
    s.iter_raw_match_order().all(|c| match c {
        Component::Combinator(k) => matches!(k, Combinator::Child | Combinator::Descendant),
        Component::LocalName(_)
        | Component::ID(_)
        | Component::Class(_)
        | Component::AttributeInNoNamespaceExists { .. }
        | Component::AttributeInNoNamespace { .. }
        | Component::AttributeOther(_)
        | Component::ExplicitUniversalType
        | Component::ExplicitAnyNamespace
        | Component::ExplicitNoNamespace
        | Component::DefaultNamespace(_)
        | Component::Namespace(..)
        | Component::Root => true,
        Component::Negation(list) | Component::Is(list) | Component::Where(list) => {
            list.slice().iter().all(streamable)
        }
        _ => false,
    })
}

/// The local name the rightmost compound of `s` asks for, if any.
fn rightmost_name(s: &Selector<Simple>) -> Option<String> {
    s.iter().find_map(|c| match c {
        Component::LocalName(n) => Some(n.lower_name.0.to_string()),
        _ => None,
    })
}

/// An element of the stack of open elements, as the `selectors` crate sees it.
#[derive(Clone, Copy, Debug)]
struct OnStack<'e> {
    path: Path<'e>,
    i: usize,
}

impl<'e> OnStack<'e> {
    fn elem(&self) -> Elem<'e> {
        self.path.elem(self.i)
    }
    fn namespace(&self) -> Namespace {
        if self.path.elems[self.i].html {
            ns!(html)
        } else {
            ns!(svg)
        }
    }
}

impl Element for OnStack<'_> {
    type Impl = Simple;

    fn opaque(&self) -> OpaqueElement {
        OpaqueElement::new(&self.path.elems[self.i])
    }
    fn parent_element(&self) -> Option<Self> {
        (self.i > 0).then(|| Self {
            path: self.path,
            i: self.i - 1,
        })
    }
    fn parent_node_is_shadow_root(&self) -> bool {
        false
    }
    fn containing_shadow_host(&self) -> Option<Self> {
        None
    }
    fn is_pseudo_element(&self) -> bool {
        false
    }
    fn prev_sibling_element(&self) -> Option<Self> {
        None
    }
    fn next_sibling_element(&self) -> Option<Self> {
        None
    }
    fn first_element_child(&self) -> Option<Self> {
        None
    }
    fn is_html_element_in_html_document(&self) -> bool {
        self.path.elems[self.i].html
    }
    fn has_local_name(&self, name: &CssLocalName) -> bool {
        *self.path.elems[self.i].name == *name.0
    }
    fn has_namespace(&self, ns: &Namespace) -> bool {
        self.namespace() == *ns
    }
    fn is_same_type(&self, other: &Self) -> bool {
        let (a, b) = (&self.path.elems[self.i], &other.path.elems[other.i]);
        a.name == b.name && a.html == b.html
    }
    fn attr_matches(
        &self,
        ns: &NamespaceConstraint<&Namespace>,
        local_name: &CssLocalName,
        operation: &AttrSelectorOperation<&CssString>,
    ) -> bool {
        if matches!(*ns, NamespaceConstraint::Specific(url) if *url != ns!()) {
            return false;
        }
        self.elem()
            .attr(&local_name.0)
            .is_some_and(|v| operation.eval_str(v))
    }
    fn match_non_ts_pseudo_class(
        &self,
        _: &scraper::selector::NonTSPseudoClass,
        _: &mut MatchingContext<Simple>,
    ) -> bool {
        false
    }
    fn match_pseudo_element(
        &self,
        _: &scraper::selector::PseudoElement,
        _: &mut MatchingContext<Simple>,
    ) -> bool {
        false
    }
    fn apply_selector_flags(&self, _: ElementSelectorFlags) {}
    fn is_link(&self) -> bool {
        *self.path.elems[self.i].name == *"link"
    }
    fn is_html_slot_element(&self) -> bool {
        true
    }
    fn has_id(&self, id: &CssLocalName, case: CaseSensitivity) -> bool {
        self.elem()
            .attr("id")
            .is_some_and(|v| case.eq(id.0.as_bytes(), v.as_bytes()))
    }
    fn has_class(&self, name: &CssLocalName, case: CaseSensitivity) -> bool {
        self.elem().attr("class").is_some_and(|v| {
            v.split_ascii_whitespace()
                .any(|c| case.eq(name.0.as_bytes(), c.as_bytes()))
        })
    }
    fn has_custom_state(&self, _: &CssLocalName) -> bool {
        false
    }
    fn imported_part(&self, _: &CssLocalName) -> Option<CssLocalName> {
        None
    }
    fn is_part(&self, _: &CssLocalName) -> bool {
        false
    }
    fn is_empty(&self) -> bool {
        false
    }
    fn is_root(&self) -> bool {
        self.i == 0
    }
    fn add_element_unique_hashes(&self, _: &mut BloomFilter) -> bool {
        false
    }
}
