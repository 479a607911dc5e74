//! Listing a wiki as its answers come: each answer's new titles written as refs and
//! flushed before the next request, the progress journaled with `--state` ([`resume`]),
//! `--max-pages` counted as refs are written (the listing stops there).
//!
//! [`resume`]: crate::resume

use std::io::Write;

use rip_core::NdjsonWriter;
use rip_mediawiki::{Continue, Limit, List, SiteInfo};
use url::Url;

use crate::WikiError;
use crate::api::Titles;
use crate::resume::{Resumed, WikiJournal};
use crate::{Wiki, WikiConfig};

/// The state folder of a listing, opened, and where it resumes (`None` without `--state`,
/// and with `--retry-failures`, which lists nothing).
pub(crate) fn open_state(
    cfg: &WikiConfig,
    api: &Url,
    lists: &[List],
) -> Result<Option<(WikiJournal, Resumed)>, WikiError> {
    let Some(dir) = cfg
        .state_dir
        .as_deref()
        .filter(|_| cfg.retry_failures.is_none())
    else {
        return Ok(None);
    };
    let lists: Vec<String> = lists
        .iter()
        .map(|l| match l {
            List::AllPages { namespace, .. } => format!("allpages:{namespace}"),
            List::CategoryMembers { category, .. } => format!("category:{category}"),
        })
        .collect();
    let params = serde_json::json!({
        "mediawiki": api.as_str(), "lists": lists, "pageSize": cfg.page_size,
    });
    Ok(Some(WikiJournal::open(dir, &params.to_string())?))
}

/// Where a listing is: titles written in earlier runs and this one, and the budget.
struct Progress {
    titles: Titles,
    written_before: u64,
    written: u64,
    max: Option<u64>,
}

impl Progress {
    fn full(&self) -> bool {
        self.max
            .is_some_and(|max| self.written_before + self.written >= max)
    }

    /// How many of `n` new titles the budget still lets through.
    fn room(&self, n: usize) -> usize {
        match self.max {
            Some(max) => n.min(max.saturating_sub(self.written_before + self.written) as usize),
            None => n,
        }
    }
}

/// Where this run writes: the output, the journal, the progress.
struct Sink<'a, W: Write> {
    out: &'a mut NdjsonWriter<W>,
    journal: Option<WikiJournal>,
    progress: Progress,
    site: &'a SiteInfo,
    limit: Limit,
}

impl Wiki {
    /// Lists `lists` (from where `state` says, when resuming), writing a ref for each new
    /// title as answers come; returns the refs written by this run.
    pub(crate) async fn list<W: Write>(
        &mut self,
        cfg: &WikiConfig,
        lists: &[List],
        site: &SiteInfo,
        out: &mut NdjsonWriter<W>,
        state: Option<(WikiJournal, Resumed)>,
    ) -> Result<u64, WikiError> {
        let (journal, resumed) = match state {
            Some((j, r)) => (Some(j), r),
            None => (None, Resumed::default()),
        };
        self.note_resumed(&resumed);
        let progress = Progress {
            written_before: resumed.titles.len() as u64,
            titles: Titles::of(resumed.titles),
            written: 0,
            max: cfg.max_pages,
        };
        let mut sink = Sink {
            out,
            journal,
            progress,
            site,
            limit: cfg.page_size.map_or(Limit::Max, Limit::Of),
        };
        if resumed.ended || sink.progress.full() {
            return Ok(0);
        }
        let mut cont = resumed.cont;
        for (i, list) in lists.iter().enumerate().skip(resumed.list) {
            let go_on = self
                .list_one(i, list, std::mem::take(&mut cont), &mut sink)
                .await?;
            if !go_on {
                return Ok(sink.progress.written);
            }
        }
        if let Some(j) = sink.journal.as_mut() {
            j.end()?;
        }
        Ok(sink.progress.written)
    }

    /// Reads list `i` from `cont` on; false when the listing must stop (the budget is spent).
    async fn list_one<W: Write>(
        &mut self,
        i: usize,
        list: &List,
        mut cont: Continue,
        sink: &mut Sink<'_, W>,
    ) -> Result<bool, WikiError> {
        for answers in 1.. {
            let page = match self.lister.list_page(list, sink.limit, &cont).await {
                Ok(page) => page,
                Err(f) => {
                    self.failed(f);
                    return Ok(true);
                }
            };
            let next = self.lister.next(&page, &cont, answers);
            let progress = &mut sink.progress;
            let mut new = progress
                .titles
                .add(page.answer.items, &mut self.lister.counts);
            let cut = new.len() - progress.room(new.len());
            new.truncate(new.len() - cut);
            let refs: Vec<_> = new.iter().map(|t| (t.clone(), None)).collect();
            self.write_refs(sink.out, &refs, sink.site)?;
            sink.progress.written += new.len() as u64;
            sink.out.flush()?;
            let next = match next {
                Ok(next) => next,
                Err(f) => {
                    self.failed(f);
                    return Ok(true);
                }
            };
            if let Some(j) = sink.journal.as_mut() {
                // An answer the budget cut is asked again on resume (its titles written
                // now are skipped then): its position is the one it was asked from.
                let resume_at = if cut > 0 { Some(&cont) } else { next.as_ref() };
                j.answer(i, resume_at, &new)?;
            }
            if sink.progress.full() {
                self.budget_spent(&sink.progress, cut, next.is_some());
                return Ok(false);
            }
            match next {
                Some(c) => cont = c,
                None => return Ok(true),
            }
        }
        unreachable!("the loop ends by a return")
    }

    fn budget_spent(&mut self, progress: &Progress, cut: usize, more: bool) {
        self.lister.counts.cut += cut as u64;
        let max = progress.max.unwrap_or_default();
        let rest = if more {
            "; the listing stopped there"
        } else {
            ""
        };
        self.notes.push(format!(
            "budget exhausted: maxPages {max}; {cut} titles of the last answer not written{rest}"
        ));
    }

    fn note_resumed(&mut self, r: &Resumed) {
        if r.titles.is_empty() && !r.ended {
            return;
        }
        let at = if r.ended {
            "the listing had ended: nothing more to write".to_owned()
        } else {
            format!("going on with list {} of the lists", r.list + 1)
        };
        self.notes.push(format!(
            "resumed: {} titles written before; {at}{}",
            r.titles.len(),
            match r.bad_lines {
                0 => String::new(),
                n => format!(" ({n} torn journal lines skipped)"),
            }
        ));
    }
}
