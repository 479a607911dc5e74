//! The headline out of a `<title>`: the site's name glued on is cut off.
//!
//! A title is often `Headline | Site`, `Site - Headline` or `Headline — Section —
//! Site`. The side that is the site's name (when the page names its site) or the side
//! another source gives as the headline (`og:title`, an `<h1>`) is taken; failing
//! both, the words before the last separator when they are more than four (else the
//! title is kept whole: `Rust - Wikipedia` is not cut to `Rust`).

/// Separators between a headline and a site's name, spaces included.
const SEPARATORS: &[&str] = &[
    " | ", " - ", " – ", " — ", " :: ", " · ", " » ", " / ", " ~ ",
];

/// Letters and digits, lower case: what two titles are compared by.
fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn same(a: &str, b: &str) -> bool {
    let (a, b) = (norm(a), norm(b));
    !a.is_empty() && a == b
}

/// `s` less a site name `site` glued on at either end; `s` when it has none.
pub fn strip_site<'s>(s: &'s str, site: Option<&str>) -> &'s str {
    let Some(site) = site else { return s };
    for sep in SEPARATORS {
        if let Some((head, tail)) = s.rsplit_once(sep)
            && same(tail, site)
            && !head.trim().is_empty()
        {
            return head.trim();
        }
        if let Some((head, tail)) = s.split_once(sep)
            && same(head, site)
            && !tail.trim().is_empty()
        {
            return tail.trim();
        }
    }
    s
}

/// The headline in a `<title>`: the side a hint names, the side that is not the site,
/// or the words before the last separator when there are enough of them.
pub fn headline_of_title<'s>(title: &'s str, hints: &[&str], site: Option<&str>) -> &'s str {
    let stripped = strip_site(title, site);
    if stripped.len() != title.len() {
        return stripped;
    }
    // Each string normalised once: this runs on every page with a <title>.
    let hints: Vec<String> = hints
        .iter()
        .map(|h| norm(h))
        .filter(|h| !h.is_empty())
        .collect();
    if hints.is_empty() {
        return cut_long_head(title);
    }
    if hints.contains(&norm(title)) {
        return title;
    }
    for sep in SEPARATORS.iter().filter(|sep| title.contains(**sep)) {
        if let Some(part) = title.split(sep).find(|p| hints.contains(&norm(p))) {
            return part.trim();
        }
    }
    cut_long_head(title)
}

/// The words before the last separator when they are more than four, else the title.
fn cut_long_head(title: &str) -> &str {
    let Some((head, _)) = SEPARATORS
        .iter()
        .filter_map(|sep| title.rsplit_once(sep))
        .max_by_key(|(head, _)| head.len())
    else {
        return title;
    };
    // The last separator of any kind: "A - B | Site" gives "A - B".
    if head.split_whitespace().count() > 4 {
        head.trim()
    } else {
        title
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_site_name_is_cut_off_either_end() {
        let site = Some("The Daily Planet");
        assert_eq!(
            strip_site("Moon landing | The Daily Planet", site),
            "Moon landing"
        );
        assert_eq!(
            strip_site("THE DAILY PLANET — Moon landing", site),
            "Moon landing"
        );
        assert_eq!(strip_site("Moon landing", site), "Moon landing");
        assert_eq!(strip_site("A - B | The Daily Planet", site), "A - B");
        assert_eq!(strip_site("The Daily Planet", site), "The Daily Planet");
    }

    #[test]
    fn a_title_is_cut_where_a_hint_or_its_length_says() {
        let t = "Why rivers meander - Science - The Planet";
        assert_eq!(
            headline_of_title(t, &["Why rivers meander"], None),
            "Why rivers meander"
        );
        assert_eq!(
            headline_of_title(t, &[], Some("The Planet")),
            "Why rivers meander - Science"
        );
        assert_eq!(
            headline_of_title("How the city lost its last tram | News", &[], None),
            "How the city lost its last tram"
        );
        assert_eq!(
            headline_of_title("Rust - Wikipedia", &[], None),
            "Rust - Wikipedia"
        );
        assert_eq!(
            headline_of_title("No separator here", &["Other"], None),
            "No separator here"
        );
    }
}
