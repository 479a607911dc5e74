//! The page's own account of the work it still has, for `--wait settled`: a script run in
//! each document before the page's own (`Page.addScriptToEvaluateOnNewDocument`, added
//! when the blank tab is opened, so off the page's time) counts what the page has started
//! and not finished, and when it last did something:
//!
//! - `fetch()` calls until their response (and a body read from it: `json()`, `text()`,
//!   …) is in and the callbacks waiting on it have run;
//! - `XMLHttpRequest`s until their `loadend` handlers have run;
//! - `<script src>` and `<link rel=stylesheet>` elements inserted by script, until they
//!   load or fail;
//! - `setTimeout` callbacks due within [`SOON_MS`] (a `fetch` 300 ms after the load event
//!   is work to come), but not those of a chain of timers set from timers deeper than
//!   [`CHAIN`] (a clock or a carousel would never let the page settle);
//! - any DOM mutation, as activity (no count).
//!
//! Each count ends a timer task after the callbacks it waited for, so a list filled from a
//! JSON response is in the DOM when the count reaches zero. The wait reads the counts
//! with [`PROBE`]; what the page does not tell (a Web Worker's requests, a timer due later
//! than [`SOON_MS`]) is still covered by the interception's own count of requests in
//! flight and, when the page never says it is done, by the `network-idle` rule.

/// Timers due within this many milliseconds are work to come.
pub const SOON_MS: u32 = 1_000;
/// Timers set from timer callbacks this deep are not counted (a recurring timer).
pub const CHAIN: u32 = 3;

/// The script run before each document's own (main world).
#[expect(
    clippy::too_many_lines,
    reason = "one script, read as the page runs it"
)]
pub(crate) fn script() -> String {
    format!(
        r#"(() => {{
  if (Object.prototype.hasOwnProperty.call(window, '__ripSettle')) return;
  const w = window, P = w.performance, origSet = w.setTimeout, origClear = w.clearTimeout;
  const st = {{ pending: 0, last: P.now() }};
  const touch = () => {{ st.last = P.now(); }};
  const begin = () => {{ st.pending++; touch(); }};
  const end = () => {{ st.pending--; touch(); }};
  const endLater = () => {{ origSet.call(w, end, 0); }};
  const timers = new Map();
  let depth = 0;
  w.setTimeout = function (fn, delay, ...rest) {{
    const d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > {soon} || depth >= {chain}) return origSet.apply(this, arguments);
    const mine = depth + 1;
    let id;
    const run = function () {{
      if (timers.delete(id)) end();
      const was = depth; depth = mine;
      try {{ return fn.apply(this, arguments); }} finally {{ depth = was; touch(); }}
    }};
    id = origSet.call(this, run, delay, ...rest);
    timers.set(id, true); begin();
    return id;
  }};
  w.clearTimeout = function (id) {{
    if (timers.delete(id)) end();
    return origClear.apply(this, arguments);
  }};
  if (w.fetch) {{
    const origFetch = w.fetch;
    w.fetch = function () {{
      begin();
      let p;
      try {{ p = origFetch.apply(this, arguments); }} catch (e) {{ end(); throw e; }}
      p.then(endLater, endLater);
      return p;
    }};
  }}
  if (w.Response) {{
    for (const name of ['json', 'text', 'arrayBuffer', 'blob', 'formData']) {{
      const orig = w.Response.prototype[name];
      if (!orig) continue;
      w.Response.prototype[name] = function () {{
        begin();
        const p = orig.apply(this, arguments);
        p.then(endLater, endLater);
        return p;
      }};
    }}
  }}
  if (w.XMLHttpRequest) {{
    const origSend = w.XMLHttpRequest.prototype.send;
    w.XMLHttpRequest.prototype.send = function () {{
      begin();
      this.addEventListener('loadend', endLater, {{ once: true }});
      try {{ return origSend.apply(this, arguments); }} catch (e) {{ end(); throw e; }}
    }};
  }}
  const loads = (n) => (n.tagName === 'SCRIPT' && n.src && !n.noModule &&
      (!n.type || /(java|ecma)script|module/i.test(n.type))) ||
    (n.tagName === 'LINK' && n.href && /(^|\s)stylesheet(\s|$)/i.test(n.rel || ''));
  new MutationObserver((records) => {{
    touch();
    for (const r of records) for (const n of r.addedNodes) {{
      if (n.nodeType !== 1 || !loads(n) || n.__ripSeen) continue;
      n.__ripSeen = true;
      begin();
      let done = false;
      const fin = () => {{ if (!done) {{ done = true; endLater(); }} }};
      n.addEventListener('load', fin, {{ once: true }});
      n.addEventListener('error', fin, {{ once: true }});
    }}
  }}).observe(document, {{ childList: true, subtree: true, attributes: true, characterData: true }});
  Object.defineProperty(w, '__ripSettle', {{
    value: () => [st.pending, P.now() - st.last], enumerable: false,
  }});
}})();"#,
        soon = SOON_MS,
        chain = CHAIN,
    )
}

/// The expression the wait evaluates: `[pending, ms since the last activity]`, or `null`
/// in a document the script did not run in.
pub(crate) const PROBE: &str =
    "(typeof window.__ripSettle === 'function') ? window.__ripSettle() : null";

/// What the page said: work pending, and how long since it last did something.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PageState {
    pub pending: i64,
    pub quiet_ms: f64,
}

impl PageState {
    /// Reads [`PROBE`]'s value (`None`: no account from this document).
    pub fn from_value(v: &serde_json::Value) -> Option<Self> {
        let a = v.as_array()?;
        Some(Self {
            pending: a.first()?.as_f64()? as i64,
            quiet_ms: a.get(1)?.as_f64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_value_reads_back() {
        let v = serde_json::json!([2, 150.5]);
        assert_eq!(
            PageState::from_value(&v),
            Some(PageState {
                pending: 2,
                quiet_ms: 150.5
            })
        );
        assert_eq!(PageState::from_value(&serde_json::Value::Null), None);
    }

    #[test]
    fn the_script_names_its_limits() {
        let s = script();
        assert!(s.contains("d > 1000"), "{s}");
        assert!(s.contains("depth >= 3"), "{s}");
    }
}
