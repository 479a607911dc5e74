//! The headline out of a `<title>`: the site's name glued on is cut off.
//!
//! A title is often `Headline | Site`, `Site - Headline` or `Headline — Section —
//! Site`. The side that is the site's name (when the page names its site) or the side
//! another source gives as the headline (`og:title`, an `<h1>`) is taken; failing
//! both, the words before the last separator when they are more than four (else the
//! title is kept whole: `Rust - Wikipedia` is not cut to `Rust`).

/// Separators between a headline and a site's name, each between two spaces.
const SEPARATORS: &[&str] = &["|", "-", "–", "—", "::", "·", "»", "/", "~"];

/// Separators before a site's name only: `Post @ Blog` (a blog platform's way), too common
/// inside headlines to cut at without the site's name after it.
const SITE_SEPARATORS: &[&str] = &["|", "-", "–", "—", "::", "·", "»", "/", "~", "@"];

/// Where `s` has a separator (` | `, ` - `, …): the byte ranges, spaces included, in
/// order. One pass over the spaces (titles are read on every page).
fn separators(s: &str) -> Vec<(usize, usize)> {
    separators_of(s, SEPARATORS)
}

fn separators_of(s: &str, marks: &[&str]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, _) in s.match_indices(' ') {
        let rest = &s[i + 1..];
        if let Some(mark) = marks
            .iter()
            .find(|m| rest.starts_with(**m) && rest[m.len()..].starts_with(' '))
            && out.last().is_none_or(|&(_, end)| end <= i)
        {
            out.push((i, i + 1 + mark.len() + 1));
        }
    }
    out
}

/// Letters and digits, lower case: what two titles are compared by.
fn norm(s: &str) -> String {
    if s.is_ascii() {
        return s
            .bytes()
            .filter(u8::is_ascii_alphanumeric)
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// True when `s`, normalised, is `normed` (no copy of `s` made).
fn norm_is(s: &str, normed: &str) -> bool {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .eq(normed.chars())
}

fn same(a: &str, b: &str) -> bool {
    let b = norm(b);
    !b.is_empty() && norm_is(a, &b)
}

/// Whether `part` names the site `site`: the name itself, or, for a site that gives its
/// name as a domain (`Factorio.com`, `www.example.org`), the domain's name without `www.`
/// and its last label (`Factorio`).
fn names_site(part: &str, site: &str) -> bool {
    if same(part, site) {
        return true;
    }
    let site = site.trim();
    let domain = site.strip_prefix("www.").unwrap_or(site);
    match domain.rsplit_once('.') {
        Some((name, tld))
            if !name.is_empty()
                && !domain.contains(char::is_whitespace)
                && (2..=6).contains(&tld.len())
                && tld.chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            same(part, name)
        }
        _ => false,
    }
}

/// `s` less a site name `site` glued on at either end, with whatever follows it at the
/// end (`Post @ Blog :: Platform ::`); `s` when it has none.
pub fn strip_site<'s>(s: &'s str, site: Option<&str>) -> &'s str {
    let Some(site) = site else { return s };
    let seps = separators_of(s, SITE_SEPARATORS);
    // The part after each separator, up to the next one: the first that is the site's
    // name ends the headline.
    for (i, &(start, end)) in seps.iter().enumerate() {
        let next = seps.get(i + 1).map_or(s.len(), |&(a, _)| a);
        if names_site(&s[end..next], site) && !s[..start].trim().is_empty() {
            return s[..start].trim();
        }
    }
    if let Some(&(start, end)) = seps.first()
        && names_site(&s[..start], site)
        && !s[end..].trim().is_empty()
    {
        return s[end..].trim();
    }
    s
}

/// The part of a declared headline (`og:title`, …) before a separator that the page's
/// `<h1>` is: "Whale strandings | Ann Lee" is "Whale strandings" when that is the `<h1>`
/// (something glued on that the page's own heading leaves off). `headline` itself when it
/// has no such part.
pub fn cut_to_heading<'s>(headline: &'s str, h1: &str) -> &'s str {
    let h1 = norm(h1);
    if h1.is_empty() || norm_is(headline, &h1) {
        return headline;
    }
    separators(headline)
        .into_iter()
        .map(|(start, _)| &headline[..start])
        .find(|head| norm_is(head, &h1))
        .map_or(headline, str::trim)
}

/// The headline in a `<title>`: the side a hint names, the side that is not the site,
/// or the words before the last separator when there are enough of them.
pub fn headline_of_title<'s>(title: &'s str, hints: &[&str], site: Option<&str>) -> &'s str {
    let stripped = strip_site(title, site);
    if stripped.len() != title.len() {
        return stripped;
    }
    let seps = separators(title);
    let Some(&(last, _)) = seps.last() else {
        return title;
    };
    // Each string normalised once: this runs on every page with a <title>.
    let hints: Vec<String> = hints
        .iter()
        .map(|h| norm(h))
        .filter(|h| !h.is_empty())
        .collect();
    if !hints.is_empty() && !hints.iter().any(|h| norm_is(title, h)) {
        // What is before or after a separator, and each part between two.
        let mut bounds = vec![0];
        bounds.extend(seps.iter().flat_map(|&(a, b)| [a, b]));
        bounds.push(title.len());
        let sides = seps.iter().flat_map(|&(a, b)| [&title[..a], &title[b..]]);
        let parts = bounds.chunks(2).map(|c| &title[c[0]..c[1]]);
        let hinted = |p: &&str| hints.iter().any(|h| norm_is(p, h));
        if let Some(part) = parts.chain(sides).find(hinted) {
            return part.trim();
        }
    } else if !hints.is_empty() {
        return title;
    }
    // The last separator of any kind: "A - B | Site" gives "A - B".
    let head = &title[..last];
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
    fn a_site_named_by_its_domain_or_followed_by_a_platform_is_cut_off() {
        let domain = Some("Planet.com");
        assert_eq!(strip_site("Moon landing | Planet", domain), "Moon landing");
        assert_eq!(
            strip_site("www.planet.org - Moon", Some("www.planet.org")),
            "Moon"
        );
        // Not a domain: no last label read past.
        assert_eq!(
            strip_site("Moon | Daily", Some("Daily Planet.x")),
            "Moon | Daily"
        );
        let blog = Some("Steven's Home");
        assert_eq!(
            strip_site("Autumn maples (2) @ Steven's Home :: Blogs ::", blog),
            "Autumn maples (2)"
        );
        // `@` is not a separator in a headline with no site's name after it.
        assert_eq!(
            strip_site("Lunch @ Joe's | Planet", blog),
            "Lunch @ Joe's | Planet"
        );
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

    #[test]
    fn a_declared_headline_is_cut_to_the_heading_the_page_shows() {
        let h = "Whale strandings | Ann Lee";
        assert_eq!(cut_to_heading(h, "Whale strandings"), "Whale strandings");
        assert_eq!(
            cut_to_heading(h, "Ann Lee"),
            h,
            "only a part before a separator"
        );
        assert_eq!(cut_to_heading(h, "Other"), h);
        assert_eq!(cut_to_heading("A - B - C", "A - B"), "A - B");
        assert_eq!(cut_to_heading("A - B", "A - B"), "A - B");
    }
}
