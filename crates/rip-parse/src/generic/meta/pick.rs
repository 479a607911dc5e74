//! Picking each metadata field from its sources, in the order of trust the module
//! docs give.

use serde_json::{Map, Value};
use url::Url;

use super::byline::{self, Place};
use super::jsonld::{self, article_nodes, names, string, url_of};
use super::title::{cut_to_heading, headline_of_title, strip_site};
use super::walk::MetaTag;
use super::{Meta, MetaWalk, Structured, date};

/// What the rest of generic extraction read that the metadata needs.
pub struct PageFacts<'a> {
    /// Where an element of the page (by its number in the outline) is: in the main
    /// content, elsewhere, or in boilerplate (for bylines); given the headline's `<h1>`
    /// (its number), whose part of the page is no boilerplate.
    pub place: &'a dyn Fn(Option<u32>, u32) -> Place,
    /// The `<title>`.
    pub title: Option<&'a str>,
    /// `<meta name=description>`.
    pub description: Option<&'a str>,
    /// The main content's text (the excerpt's last resort).
    pub text: &'a str,
    /// What relative URLs resolve against.
    pub base: &'a Url,
}

/// The longest excerpt, in characters.
const EXCERPT_CHARS: usize = 300;

const OPEN_GRAPH: &[&str] = &[
    "og:", "article:", "book:", "profile:", "music:", "video:", "fb:",
];

/// The `<meta>` tags by key, and the structured sources.
struct Sources<'w> {
    metas: &'w [MetaTag],
    items: &'w [Value],
    nodes: Vec<&'w Map<String, Value>>,
    microdata: &'w [Value],
}

impl<'w> Sources<'w> {
    /// The first value of the first of `keys` the page gives.
    fn meta(&self, keys: &[&str]) -> Option<&'w str> {
        keys.iter().find_map(|k| self.metas(k).next())
    }

    /// Every value of `key`, those given as a `property` only when there are some: a
    /// key given both ways is one value said twice, and RDFa's (OpenGraph's own way)
    /// is the one meant.
    fn metas(&self, key: &str) -> impl Iterator<Item = &'w str> {
        let of_key = self.metas.iter().filter(move |m| m.key == key);
        let property = of_key.clone().any(|m| m.property);
        of_key
            .filter(move |m| m.property || !property)
            .map(|m| m.content.as_str())
    }

    /// The first JSON-LD node's `key`.
    fn ld(&self, key: &str) -> Option<&'w str> {
        self.nodes.iter().find_map(|n| string(n, key))
    }

    /// The first microdata item's property `key` (a string, or a nested item's name).
    fn micro(&self, key: &str) -> Option<&'w str> {
        self.microdata.iter().find_map(|i| micro_prop(i, key, 0))
    }
}

fn micro_prop<'v>(item: &'v Value, key: &str, depth: usize) -> Option<&'v str> {
    let props = item.get("properties")?.as_object()?;
    let found = match props.get(key) {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Array(a)) => a.iter().find_map(|v| {
            v.as_str()
                .or_else(|| v.get("properties")?.get("name")?.as_str())
        }),
        Some(v @ Value::Object(_)) => v.get("properties")?.get("name")?.as_str(),
        _ => None,
    };
    found.map(str::trim).filter(|s| !s.is_empty()).or_else(|| {
        (depth < 3)
            .then(|| {
                props
                    .values()
                    .flat_map(|v| v.as_array().map_or(std::slice::from_ref(v), Vec::as_slice))
                    .find_map(|v| micro_prop(v, key, depth + 1))
            })
            .flatten()
    })
}

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://") || s.starts_with('/')
}

/// True for what may be a person's or an organisation's name: not empty, not a URL,
/// not an account's handle (`@ann`, `CC7567`: one word with a digit).
fn is_name(s: &str) -> bool {
    let handle = s.starts_with('@')
        || (!s.contains(char::is_whitespace) && s.contains(|c: char| c.is_ascii_digit()));
    !s.is_empty() && !is_url(s) && !handle
}

/// The article's byline ([`byline::pick`]), else a "By …" line at the top of its text.
fn byline(bylines: &[byline::Byline], h1: Option<u32>, page: &PageFacts<'_>) -> Option<String> {
    byline::pick(bylines, |at| (page.place)(h1, at))
        .map(str::to_owned)
        .or_else(|| byline::by_line(page.text))
}

/// Picks the metadata from what the walk read.
pub fn pick(walk: MetaWalk, page: &PageFacts<'_>) -> Meta {
    let microdata = walk.microdata.finish();
    let (items, warnings) = jsonld::parse_blocks(&walk.jsonld);
    let src = Sources {
        metas: &walk.metas,
        items: &items,
        nodes: article_nodes(&items),
        microdata: &microdata,
    };
    let site_name = site_name(&src);
    let meta = Meta {
        headline: headline(&src, walk.h1.as_deref(), page.title, site_name.as_deref()),
        authors: authors(&src, byline(&walk.bylines, walk.h1_at, page).as_deref()),
        published: src
            .ld("datePublished")
            .or_else(|| src.meta(&["article:published_time"]))
            .or_else(|| src.micro("datePublished"))
            .or_else(|| src.meta(PUBLISHED))
            .or(walk.time.as_deref())
            .and_then(date::normalise),
        modified: src
            .ld("dateModified")
            .or_else(|| src.meta(&["article:modified_time", "og:updated_time"]))
            .or_else(|| src.micro("dateModified"))
            .or_else(|| src.meta(MODIFIED))
            .and_then(date::normalise),
        excerpt: excerpt(&src, page),
        image: image(&src, walk.image_src.as_deref(), page.base),
        site_name,
        structured: Structured::default(),
    };
    Meta {
        structured: structured(&walk.metas, items, microdata, warnings),
        ..meta
    }
}

const PUBLISHED: &[&str] = &[
    "datepublished",
    "date",
    "pubdate",
    "publishdate",
    "publish-date",
    "publish_date",
    "dc.date.issued",
    "dc.date",
    "dcterms.issued",
    "dcterms.date",
    "dcterms.created",
    "citation_publication_date",
    "citation_date",
    "citation_online_date",
    "parsely-pub-date",
    "sailthru.date",
];

const MODIFIED: &[&str] = &[
    "datemodified",
    "last-modified",
    "dc.date.modified",
    "dcterms.modified",
];

fn site_name(src: &Sources<'_>) -> Option<String> {
    let publisher = src
        .nodes
        .iter()
        .filter_map(|n| n.get("publisher"))
        .flat_map(|p| names(p, src.items))
        .next();
    let website = || {
        src.items
            .iter()
            .filter_map(Value::as_object)
            .filter(|n| jsonld::types(n).any(|t| t == "WebSite"))
            .find_map(|n| string(n, "name"))
    };
    publisher
        .or_else(|| src.meta(&["og:site_name"]).map(str::to_owned))
        .or_else(|| website().map(str::to_owned))
        .or_else(|| src.meta(&["application-name"]).map(str::to_owned))
}

fn headline(
    src: &Sources<'_>,
    h1: Option<&str>,
    title: Option<&str>,
    site: Option<&str>,
) -> Option<String> {
    let ld_headlines = src.nodes.iter().filter_map(|n| string(n, "headline"));
    let ld_names = src
        .nodes
        .iter()
        .filter(|n| jsonld::types(n).any(jsonld::is_article))
        .filter_map(|n| string(n, "name"));
    let metas = |keys: &'static [&'static str]| {
        keys.iter()
            .flat_map(|k| src.metas(k).filter(|v| !v.is_empty()))
    };
    let declared: Vec<&str> = ld_headlines
        .chain(ld_names)
        .chain(metas(&["og:title", "twitter:title"]))
        .chain(src.micro("headline"))
        .chain(metas(TITLE_METAS))
        .map(|h| strip_site(h, site))
        // The site's own name is no article's headline (an `og:title` left at the
        // site's default).
        .filter(|h| site.is_none_or(|s| norm(h) != norm(s)))
        .collect();
    // The first declared headline the page bears out (the <title> or the <h1> shows it),
    // else the first declared: a JSON-LD `headline` that is a description of the
    // subject, not its title, loses to a `name` the title shows.
    if let Some(&first) = declared.first() {
        let (title_norm, h1_norm) = (title.map(norm), h1.map(norm));
        let shown = |h: &str| {
            let h = norm(h);
            !h.is_empty()
                && (title_norm.as_ref().is_some_and(|t| t.contains(&h)) || h1_norm == Some(h))
        };
        let h = declared.iter().find(|h| shown(h)).map_or(first, |h| *h);
        return Some(h1.map_or(h, |h1| cut_to_heading(h, h1)).to_owned());
    }
    match title {
        Some(t) => {
            let hints: Vec<&str> = h1.into_iter().collect();
            Some(headline_of_title(t, &hints, site).to_owned())
        }
        None => h1.map(str::to_owned),
    }
}

const TITLE_METAS: &[&str] = &[
    "dc.title",
    "dcterms.title",
    "citation_title",
    "parsely-title",
    "title",
];

/// Letters and digits, lower case, words single-spaced: for comparing titles.
fn norm(s: &str) -> String {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn authors(src: &Sources<'_>, byline: Option<&str>) -> Vec<String> {
    let named =
        |names: Vec<String>| -> Vec<String> { names.into_iter().filter(|a| is_name(a)).collect() };
    let ld = src
        .nodes
        .iter()
        .filter_map(|n| n.get("author").or_else(|| n.get("creator")))
        .map(|a| named(names(a, src.items)))
        .find(|n| !n.is_empty());
    let micro = || {
        Some(named(
            src.micro("author").map(str::to_owned).into_iter().collect(),
        ))
        .filter(|n| !n.is_empty())
    };
    // Every value of the first key given: a paper lists its authors one tag each.
    let meta = || {
        META_AUTHORS
            .iter()
            .map(|k| named(src.metas(k).map(str::to_owned).collect()))
            .find(|names| !names.is_empty())
    };
    let page = || named(byline.map(str::to_owned).into_iter().collect());
    let mut authors = ld.or_else(micro).or_else(meta).unwrap_or_else(page);
    authors.dedup();
    authors
}

const META_AUTHORS: &[&str] = &[
    "dc.creator",
    "dcterms.creator",
    "citation_author",
    "author",
    "article:author",
    "og:article:author",
    "parsely-author",
    "sailthru.author",
];

fn excerpt(src: &Sources<'_>, page: &PageFacts<'_>) -> Option<String> {
    let declared = src
        .ld("description")
        .or_else(|| src.meta(&["og:description"]))
        .or(page.description)
        .or_else(|| src.meta(&["twitter:description", "dc.description"]));
    let from_text = || {
        page.text
            .lines()
            .find(|l| l.split_whitespace().count() >= 20)
    };
    let e = declared.or_else(from_text)?.trim();
    if e.chars().count() <= EXCERPT_CHARS {
        return (!e.is_empty()).then(|| e.to_owned());
    }
    let cut: String = e.chars().take(EXCERPT_CHARS).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    Some(format!("{}…", cut.trim_end()))
}

fn image(src: &Sources<'_>, image_src: Option<&str>, base: &Url) -> Option<String> {
    let og = [
        "og:image",
        "og:image:url",
        "og:image:secure_url",
        "twitter:image",
        "twitter:image:src",
    ];
    let ld = || {
        src.nodes
            .iter()
            .find_map(|n| n.get("image").and_then(|i| url_of(i, src.items)))
    };
    let found = src
        .meta(&og)
        .or_else(ld)
        .or_else(|| src.micro("image"))
        .or(image_src)?;
    base.join(found.trim()).ok().map(String::from)
}

fn structured(
    metas: &[MetaTag],
    json_ld: Vec<Value>,
    microdata: Vec<Value>,
    warnings: Vec<String>,
) -> Structured {
    let mut open_graph = Map::new();
    let mut twitter = Map::new();
    for MetaTag {
        key: k, content: v, ..
    } in metas
    {
        let to = if k.starts_with("twitter:") {
            &mut twitter
        } else if OPEN_GRAPH.iter().any(|p| k.starts_with(p)) {
            &mut open_graph
        } else {
            continue;
        };
        let v = Value::String(v.clone());
        match to.get_mut(k) {
            None => {
                to.insert(k.clone(), v);
            }
            Some(Value::Array(a)) => a.push(v),
            Some(old) => *old = Value::Array(vec![old.take(), v]),
        }
    }
    Structured {
        json_ld,
        open_graph,
        twitter,
        microdata,
        warnings,
    }
}
