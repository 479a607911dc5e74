//! Writing WARC files (being built for issue 39).
