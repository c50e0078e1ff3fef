//! The allocator of the `lkpbot` binary, and of the benchmarks that time
//! its import (`examples/bench_ingest.rs` includes this file), so they
//! measure what a user runs.

/// jemalloc rather than glibc's malloc. A fifth of the parse workers'
/// time in an import went to glibc's allocator (a message is hundreds of
/// small allocations, freed on another thread); with jemalloc an import
/// of the cgroups list takes about 8% less wall time and CPU, eight
/// copies of it 7%, at the same peak RSS with [`MALLOC_CONF`].
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its first allocation (`_RJEM_MALLOC_CONF`
/// in the environment overrides them): one arena (with the default of
/// four a core the import's peak RSS was 6 MiB higher, no faster),
/// allocations from 256 KiB (a robot report's bytes) in an arena of their
/// own that returns them at once, small thread caches, and memory
/// returned to the system 200 ms after it was freed. Measured against
/// the defaults and other values on the cgroups list and eight copies
/// of it (README, "Speed and memory").
#[unsafe(export_name = "_rjem_malloc_conf")]
static MALLOC_CONF: &u8 =
    &b"narenas:1,oversize_threshold:262144,tcache_max:4096,dirty_decay_ms:200,muzzy_decay_ms:0\0"[0];
