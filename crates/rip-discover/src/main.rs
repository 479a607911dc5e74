//! `rip-discover`: being written (issue 4); the library's modules are usable already.

fn main() -> std::process::ExitCode {
    eprintln!("rip-discover: the crawl loop is not written yet");
    std::process::ExitCode::from(1)
}
