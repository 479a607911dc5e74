//! Pipelines with rip-fetch: added once rip-fetch lands.
