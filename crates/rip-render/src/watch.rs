//! A blank tab readied for the page it will show, before that page is known: the script
//! that keeps the page's account of its work (for `settled`), the interception of every
//! request, and the listeners of its load event, lifecycle, script errors, dialogs and
//! crash. The renderer opens tabs ahead while other pages settle, so this set-up (a dozen
//! DevTools commands, ~0.1 s on a loaded machine) is off each page's own time; the page's
//! document is handed to the interception when it is known ([`Interceptor::set_document`]),
//! and what was seen of the blank tab itself is forgotten when its navigation starts
//! ([`Seen::arm`]).

use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{self, RequestPattern, RequestStage};
use chromiumoxide::cdp::browser_protocol::inspector::{self, EventTargetCrashed};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, EventJavascriptDialogOpening, EventLifecycleEvent,
    EventLoadEventFired, HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::browser_protocol::{log, network, performance};
use chromiumoxide::cdp::js_protocol::runtime::{
    ConsoleApiCalledType, EventConsoleApiCalled, EventExceptionThrown, RemoteObject,
};
use chromiumoxide::error::CdpError;
use futures::StreamExt;
use rip_core::ConsoleError;
use tokio::task::JoinSet;

use crate::intercept::Interceptor;
use crate::seen::{Seen, cut};
use crate::settle;
use crate::tab::TabSettings;
use crate::wait::Wait;

/// A tab's watchers, running from the moment it was readied until it is dropped.
pub(crate) struct Watched {
    /// What the page does.
    pub seen: Seen,
    /// Answers its requests; told the page's document before the navigation.
    pub interceptor: Arc<Interceptor>,
    /// The listeners' and the interception's tasks, aborted when this is dropped.
    _watchers: JoinSet<()>,
}

/// Readies `page` (a blank tab) for a page of `settings`: the settle script with
/// [`Wait::Settled`], the DevTools domains a render needs and only those, the listeners
/// and the interception.
pub(crate) async fn ready(page: &Page, settings: &TabSettings) -> Result<Watched, CdpError> {
    if settings.wait == Wait::Settled {
        let add = AddScriptToEvaluateOnNewDocumentParams::new(settle::script());
        page.execute(add).await?;
    }
    quiet_domains(page).await?;
    let seen = Seen::default();
    let mut watchers = JoinSet::new();
    let paused = page.event_listener::<fetch::EventRequestPaused>().await?;
    watch_page_events(page, &seen, &mut watchers).await?;
    watch_script_events(page, &seen, &mut watchers).await?;
    let interceptor = Arc::new(Interceptor::new(
        settings.fetcher.clone(),
        settings.shared.clone(),
        seen.clone(),
        settings.allow,
        settings.max_requests,
    ));
    watchers.spawn(crate::intercept::serve(
        page.clone(),
        paused,
        interceptor.clone(),
    ));
    let enable = fetch::EnableParams {
        patterns: Some(vec![RequestPattern {
            url_pattern: Some("*".into()),
            resource_type: None,
            request_stage: Some(RequestStage::Request),
        }]),
        handle_auth_requests: None,
    };
    page.execute(enable).await?;
    // The crash event comes only from an enabled Inspector domain.
    page.execute(inspector::EnableParams::default()).await?;
    Ok(Watched {
        seen,
        interceptor,
        _watchers: watchers,
    })
}

/// Turns off the domains chromiumoxide enables on every tab that a render does not read:
/// `Network` (an event per request and response, and a copy of each body kept for
/// `Network.getResponseBody`: every request is answered through the interception, which
/// sees them all), `Performance` (metrics) and `Log` (the browser's log entries; script
/// errors come from `Runtime`).
async fn quiet_domains(page: &Page) -> Result<(), CdpError> {
    page.execute(network::DisableParams::default()).await?;
    page.execute(performance::DisableParams::default()).await?;
    page.execute(log::DisableParams::default()).await?;
    Ok(())
}

/// The page's load event, its main frame's lifecycle and its crash.
async fn watch_page_events(
    page: &Page,
    seen: &Seen,
    watchers: &mut JoinSet<()>,
) -> Result<(), CdpError> {
    let mut loads = page.event_listener::<EventLoadEventFired>().await?;
    let mut crashes = page.event_listener::<EventTargetCrashed>().await?;
    let mut lifecycle = page.event_listener::<EventLifecycleEvent>().await?;
    let main_frame = page.mainframe().await?;
    let s = seen.clone();
    watchers.spawn(async move {
        while loads.next().await.is_some() {
            s.load_fired();
        }
    });
    let s = seen.clone();
    watchers.spawn(async move {
        while let Some(ev) = lifecycle.next().await {
            if main_frame.as_ref().is_none_or(|f| *f == ev.frame_id) {
                s.lifecycle(&ev.name, ev.loader_id.inner());
            }
        }
    });
    let s = seen.clone();
    watchers.spawn(async move {
        if crashes.next().await.is_some() {
            s.crash();
        }
    });
    Ok(())
}

/// The page's console errors, uncaught exceptions and dialogs (dismissed).
async fn watch_script_events(
    page: &Page,
    seen: &Seen,
    watchers: &mut JoinSet<()>,
) -> Result<(), CdpError> {
    let mut console = page.event_listener::<EventConsoleApiCalled>().await?;
    let mut exceptions = page.event_listener::<EventExceptionThrown>().await?;
    let mut dialogs = page
        .event_listener::<EventJavascriptDialogOpening>()
        .await?;
    let s = seen.clone();
    watchers.spawn(async move {
        while let Some(ev) = console.next().await {
            if ev.r#type == ConsoleApiCalledType::Error {
                s.console_error(console_error(&ev), *ev.timestamp.inner());
            }
        }
    });
    let s = seen.clone();
    watchers.spawn(async move {
        while let Some(ev) = exceptions.next().await {
            s.console_error(exception(&ev), *ev.timestamp.inner());
        }
    });
    let (s, p) = (seen.clone(), page.clone());
    watchers.spawn(async move {
        while dialogs.next().await.is_some() {
            s.dialog();
            let _ = p.execute(HandleJavaScriptDialogParams::new(false)).await;
        }
    });
    Ok(())
}

fn exception(ev: &EventExceptionThrown) -> ConsoleError {
    let d = &ev.exception_details;
    let text = d
        .exception
        .as_ref()
        .and_then(|e| e.description.clone())
        .unwrap_or_else(|| d.text.clone());
    ConsoleError {
        kind: "exception".into(),
        text,
        url: d.url.clone(),
        line: Some(d.line_number as u32 + 1),
    }
}

fn console_error(ev: &EventConsoleApiCalled) -> ConsoleError {
    let text = ev
        .args
        .iter()
        .map(remote_text)
        .collect::<Vec<_>>()
        .join(" ");
    let frame = ev.stack_trace.as_ref().and_then(|t| t.call_frames.first());
    ConsoleError {
        kind: "console".into(),
        text: cut(&text),
        url: frame.map(|f| f.url.clone()).filter(|u| !u.is_empty()),
        line: frame.map(|f| f.line_number as u32 + 1),
    }
}

fn remote_text(o: &RemoteObject) -> String {
    match &o.value {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => o.description.clone().unwrap_or_default(),
    }
}
