#![allow(clippy::print_stdout)] // a measuring tool: its report is its output
//! rip-discover's crawl memory at size, without a network (`scripts/bench/scale/frontier`):
//! URLS items as a crawl enqueues them (one start page linking to LISTINGS listing pages,
//! each linking to its share of the URLS item pages over HOSTS hosts: the whole item level
//! waits at once, the worst case for a breadth-first frontier), each key added to the
//! visited set (the frontier's, as in the crawl), then every item taken in the frontier's
//! order, with a budget of MEMORY bytes for waiting items in memory (the rest on disk).
//!
//! Prints one JSON line: items, items spilled, seconds to enqueue and to take, peak RSS.
//!
//! Usage: `frontier_scale URLS HOSTS MEMORY`

use std::time::Instant;

use rip_core::Ref;
use rip_discover::frontier::{Frontier, Item, ItemKind, key};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let [urls, hosts, memory] = args[..] else {
        eprintln!("usage: frontier_scale URLS HOSTS MEMORY");
        std::process::exit(1);
    };
    let mut frontier = Frontier::with_memory(memory as usize);
    let started = Instant::now();
    for i in 0..urls {
        let host = i % hosts;
        let url = format!(
            "https://site-{host}.example/catalogue/section-{}/item-{i}.html",
            i % 97
        );
        let mut r = Ref::new(url.clone());
        r.context.depth = 2;
        r.context.parent = Some(format!(
            "https://site-{host}.example/catalogue/section-{}/",
            i % 97
        ));
        r.context.link_text = Some(format!("Item {i}: a product of section {}", i % 97));
        let k = key(&url);
        if frontier.visit(k) {
            let mut item = Item::new(r, k, ItemKind::Page);
            item.is_target = true;
            item.dispatch_order = i / 1000;
            frontier.push(item);
        }
    }
    let enqueued = started.elapsed().as_secs_f64();
    let after_push = rip_core::peak_rss_bytes().unwrap_or(0);
    let started = Instant::now();
    let mut taken = 0u64;
    while let Some(item) = frontier.pop_up_to(u32::MAX) {
        taken += u64::from(!item.record.url.is_empty());
    }
    let took = started.elapsed().as_secs_f64();
    assert_eq!(taken, urls, "every item comes back");
    println!(
        "{{\"urls\":{urls},\"hosts\":{hosts},\"memoryBudget\":{memory},\"spilled\":{},\"lost\":{},\
         \"enqueueS\":{enqueued:.2},\"takeS\":{took:.2},\"peakRssAfterEnqueueMB\":{:.1},\"peakRssMB\":{:.1}}}",
        frontier.spilled(),
        frontier.lost(),
        after_push as f64 / 1e6,
        rip_core::peak_rss_bytes().unwrap_or(0) as f64 / 1e6
    );
}
