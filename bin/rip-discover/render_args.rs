//! The rendering flags: follow the links of each page's DOM after headless Chromium ran
//! its scripts (see the `rip_render` crate).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// Which pages `--render` renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RenderMode {
    /// Every page (`--render` alone).
    All,
    /// The pages whose content needs script.
    Auto,
}

/// Links from the rendered DOM.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Read each page's links from its DOM after headless Chromium ran its scripts (links
    /// a client-side router or a script-built list adds), with the same scope, budgets and
    /// resume. The rendered pages are cached, so a rip-render after replays them without a
    /// browser; a page whose render fails gives the links of its HTML as sent (counted in
    /// renderFallbacks, named in the summary's notes). `--render auto` renders only the
    /// pages whose HTML shows that their content needs script (an empty application root,
    /// JSON data the body lacks, empty lists, ...), the decision learnt per URL pattern;
    /// the others' links are read from the HTML as sent. Give the start URLs before it.
    #[arg(
        help_heading = "Rendering",
        long,
        value_name = "MODE",
        value_enum,
        num_args = 0..=1,
        default_missing_value = "all",
        conflicts_with = "mediawiki"
    )]
    pub render: Option<RenderMode>,
    /// Pages rendered at once: browser tabs.
    #[arg(
        help_heading = "Rendering",
        long,
        value_name = "N",
        default_value_t = 4,
        requires = "render"
    )]
    pub render_tabs: usize,
    /// When a page is done, as `rip-render --wait`: `settled` (loaded, no request in
    /// flight, and the page says it has no work pending), `load`, `network-idle` (loaded,
    /// no request in flight for 500 ms) or `selector:CSS`.
    #[arg(
        help_heading = "Rendering",
        long,
        value_name = "RULE",
        default_value = "settled",
        requires = "render"
    )]
    pub render_wait: rip_render::Wait,
    /// The longest a page may take to settle; then its links are those of its HTML as
    /// sent.
    #[arg(help_heading = "Rendering", long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration, requires = "render")]
    pub render_timeout: Duration,
    /// Rendered pages share one browser session, as `rip-render --session`: cookies and
    /// storage a page leaves are seen by the pages after it (a sign-in done once).
    #[arg(help_heading = "Rendering", long, requires = "render")]
    pub render_session: bool,
    /// The Chromium executable.
    #[arg(help_heading = "Rendering", long, env = "RIP_CHROMIUM", default_value = rip_render::DEFAULT_CHROMIUM, value_name = "PATH")]
    pub chromium: PathBuf,
}

impl RenderArgs {
    /// `--render auto`.
    pub fn auto(&self) -> bool {
        self.render == Some(RenderMode::Auto)
    }

    /// The renderer's settings, with `--render`; an error when the browser is missing.
    pub fn settings(&self) -> anyhow::Result<Option<rip_render::RenderSettings>> {
        if self.render.is_none() {
            return Ok(None);
        }
        if !self.chromium.is_file() {
            anyhow::bail!(
                "--render: no browser at {} (hint: apt-get install chromium, or --chromium PATH)",
                self.chromium.display()
            );
        }
        Ok(Some(rip_render::RenderSettings {
            tabs: self.render_tabs.max(1),
            wait: self.render_wait.clone(),
            page_timeout: self.render_timeout,
            session: self.render_session,
            browser: rip_render::BrowserSettings {
                executable: self.chromium.clone(),
                ..Default::default()
            },
            ..Default::default()
        }))
    }
}
