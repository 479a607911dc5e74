//! [`Sample`]: built-in bodies for content-type and charset tests.

use serde::{Deserialize, Serialize};

const PNG: &[u8] = include_bytes!("../assets/tiny.png");
const PDF: &[u8] = include_bytes!("../assets/tiny.pdf");

// `Café crème brûlée € 5` in windows-1252: é = E9, è = E8, û = FB, € = 80.
const CP1252_LABELLED_UTF8: &[u8] = b"<!doctype html>\n<html><head><title>Menu</title></head>\n\
<body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e \x80 5</p></body></html>\n";

const META_CHARSET_ONLY: &[u8] = b"<!doctype html>\n<html><head><meta charset=\"windows-1252\">\
<title>Menu</title></head>\n<body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e \x80 5</p></body></html>\n";

const HTTP_EQUIV_CHARSET: &[u8] =
    b"<!doctype html>\n<html><head><meta http-equiv=\"Content-Type\" \
content=\"text/html; charset=windows-1252\"><title>Menu</title></head>\n\
<body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e \x80 5</p></body></html>\n";

const NO_CHARSET_UTF8: &[u8] = "<!doctype html>\n<html><head><title>Menu</title></head>\n<body><p>Café crème brûlée € 5</p></body></html>\n".as_bytes();

/// The text of the `<p>` in every HTML sample, as a correct decoder reads it.
pub const SAMPLE_TEXT: &str = "Café crème brûlée € 5";

/// Built-in bodies whose bytes and `Content-Type` disagree, or that are not HTML.
///
/// Every HTML sample has one paragraph whose correctly decoded text is [`SAMPLE_TEXT`].
/// In the JSON plan a sample is named in snake case: `{"sample": "meta_charset_only"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sample {
    /// A 1×1 PNG, `image/png`.
    Png,
    /// A one-page PDF, `application/pdf`.
    Pdf,
    /// The same PNG bytes, mislabelled `text/html; charset=utf-8`.
    PngLabelledHtml,
    /// `text/html; charset=utf-8` in the header, but windows-1252 bytes (a wrong charset).
    Windows1252LabelledUtf8,
    /// `text/html` without a charset, windows-1252 bytes and `<meta charset="windows-1252">`.
    MetaCharsetOnly,
    /// `text/html` without a charset, windows-1252 bytes and the old
    /// `<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">`.
    HttpEquivCharset,
    /// `text/html` without a charset and no `<meta>`: UTF-8 bytes (a missing charset).
    NoCharsetUtf8,
}

impl Sample {
    /// Every sample, for tests that loop over them.
    pub const ALL: [Sample; 7] = [
        Sample::Png,
        Sample::Pdf,
        Sample::PngLabelledHtml,
        Sample::Windows1252LabelledUtf8,
        Sample::MetaCharsetOnly,
        Sample::HttpEquivCharset,
        Sample::NoCharsetUtf8,
    ];

    /// The `Content-Type` the server sends.
    pub fn content_type(self) -> &'static str {
        match self {
            Sample::Png => "image/png",
            Sample::Pdf => "application/pdf",
            Sample::PngLabelledHtml | Sample::Windows1252LabelledUtf8 => "text/html; charset=utf-8",
            Sample::MetaCharsetOnly | Sample::HttpEquivCharset | Sample::NoCharsetUtf8 => {
                "text/html"
            }
        }
    }

    /// The body bytes.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            Sample::Png | Sample::PngLabelledHtml => PNG,
            Sample::Pdf => PDF,
            Sample::Windows1252LabelledUtf8 => CP1252_LABELLED_UTF8,
            Sample::MetaCharsetOnly => META_CHARSET_ONLY,
            Sample::HttpEquivCharset => HTTP_EQUIV_CHARSET,
            Sample::NoCharsetUtf8 => NO_CHARSET_UTF8,
        }
    }

    /// The encoding the bytes really are in, as a WHATWG label, or `None` for binary samples.
    pub fn true_charset(self) -> Option<&'static str> {
        match self {
            Sample::Png | Sample::Pdf | Sample::PngLabelledHtml => None,
            Sample::NoCharsetUtf8 => Some("utf-8"),
            Sample::Windows1252LabelledUtf8
            | Sample::MetaCharsetOnly
            | Sample::HttpEquivCharset => Some("windows-1252"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_samples_decode_to_the_sample_text() {
        for sample in Sample::ALL {
            let bytes = sample.bytes();
            match sample.true_charset() {
                None => assert!(bytes.starts_with(b"\x89PNG") || bytes.starts_with(b"%PDF-")),
                Some("utf-8") => {
                    let text = std::str::from_utf8(bytes).expect("utf-8 sample");
                    assert!(text.contains(SAMPLE_TEXT), "{sample:?}");
                }
                Some(_) => {
                    // windows-1252 for the bytes used here: Latin-1 plus 0x80 = €.
                    let text: String = bytes
                        .iter()
                        .map(|&b| if b == 0x80 { '€' } else { char::from(b) })
                        .collect();
                    assert!(text.contains(SAMPLE_TEXT), "{sample:?}");
                    assert!(
                        std::str::from_utf8(bytes).is_err(),
                        "{sample:?} must not be UTF-8"
                    );
                }
            }
        }
    }
}
