//! The HTML report opened in headless Chromium (Debian's `chromium`, installed by
//! `scripts/setup test`), and the screenshot checked to be a real rendering: many
//! colours and a good share of non-white pixels, which a blank or broken page lacks.

use std::path::Path;
use std::process::{Command, Output};

use crate::{run, testdata};

/// The installed Chromium's command.
fn chromium() -> &'static str {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("chromium is not installed (hint: run `scripts/setup test` as root)")
}

/// Headless Chromium, a fresh profile, on the file `page` with `args` (what to do with it:
/// `--dump-dom`, `--screenshot=…`, `--window-size=…`).
pub(crate) fn headless(page: &Path, args: &[&str]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .args(args)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

/// Distinct colours and the share of pixels that are not near-white, in a PNG.
fn png_stats(path: &Path) -> (usize, f64, (u32, u32)) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let bytes = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut non_white = 0usize;
    let mut pixels = 0usize;
    for px in bytes.chunks_exact(channels) {
        let rgb = match channels {
            1 | 2 => [px[0]; 3],
            _ => [px[0], px[1], px[2]],
        };
        colours.insert(rgb);
        pixels += 1;
        if rgb.iter().any(|&c| c < 235) {
            non_white += 1;
        }
    }
    (
        colours.len(),
        non_white as f64 / pixels as f64,
        (info.width, info.height),
    )
}

#[test]
fn the_html_report_renders_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("report.html");
    let input = std::fs::read_to_string(testdata("health/lost.reconciled.ndjson")).unwrap();
    let r = run(
        &["--html", html.to_str().unwrap(), "--json", "-"],
        Some(&input),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: no script, nothing fetched.
    assert!(!page.contains("<script"), "no script");
    for attr in ["src=", "href=", "url("] {
        assert!(
            !page.contains(attr),
            "nothing loaded from anywhere: found {attr}"
        );
    }
    assert!(page.contains("<svg") && page.contains("ancestries/12.html"));

    let png = tmp.path().join("shot.png");
    let shot = format!("--screenshot={}", png.display());
    let out = headless(&html, &[&shot, "--window-size=1200,1600"]);
    assert!(
        png.is_file(),
        "no screenshot; chromium said: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (colours, ink, size) = png_stats(&png);
    assert_eq!(size, (1200, 1600));
    // A blank page has 1 colour and no ink; measured on this report: hundreds of
    // colours (anti-aliased text, charts) and a coloured header and bars.
    assert!(
        colours >= 50,
        "only {colours} colours: blank or unstyled page"
    );
    assert!(ink > 0.05, "only {:.1}% non-white pixels", ink * 100.0);
    // The header is red for an incomplete crawl: sample the top-left area.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let px = &buf[(20 * info.width as usize + 10) * ch..][..3];
    assert!(
        px[0] > 150 && px[1] < 80 && px[2] < 80,
        "header colour {px:?}, expected red"
    );
}
