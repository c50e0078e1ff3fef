//! Dashboard load test (not a test): imports the corpus (and any other
//! mbox given) into a fresh store, serves it on 127.0.0.1 exactly as
//! `lkpbot serve` does (the same router, a multi-thread runtime of its
//! own), and drives it with 8 clients at once over keep-alive HTTP/1.1
//! connections, one route at a time:
//!
//! - `/healthz`: the baseline, an HTTP round trip and one small query;
//! - `/cases/{id}` and `/api/cases/{id}`: every case of the store in turn;
//! - `/` and `/api/cases`: the open cases.
//!
//! Prints each route's requests per second and latency percentiles, and
//! its p99 as a multiple of the baseline's; then the lists' first request
//! after a change to the store, when they are read again. Targets: a case page or case
//! API call under 10 ms at p99, the open cases under 50 ms.
//!
//! ```sh
//! cargo run --release --example bench_web                        # the corpus
//! cargo run --release --example bench_web -- /tmp/cgroups.mbox   # and a whole real list besides
//! cargo run --release --example bench_web -- --store /tmp/million.db   # a store as it is (bench_ingest --million)
//! ```
//!
//! Besides every case in turn, the largest case (the most messages) is
//! asked on its own, its page (the first event, the state's changes and
//! the latest events) and its JSON (whole): what costs most.
//!
//! Requests are bounded (`BENCH_REQUESTS` per client and route, default
//! 250) and go to 127.0.0.1 only. `BENCH_ROUTES=/cases/` runs only the
//! routes whose name contains it (the baseline always runs first) and
//! skips the first requests after a change, for a profile of one route.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use lkpbot::case::CaseFilter;
use lkpbot::classify::ClassifyConfig;
use lkpbot::engine::{Engine, Settings};
use lkpbot::store::{Reader, Store};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const CLIENTS: usize = 8;
/// 2027-01-15: after every message of the corpus.
const NOW: i64 = 1_800_000_000;
const CORPUS: &str = "../shared/corpus/lkp-threads.mbox";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let given = (args.first().map(String::as_str) == Some("--store")).then(|| PathBuf::from(&args[1]));
    let mut paths: Vec<PathBuf> = Vec::new();
    if given.is_none() {
        paths.push(PathBuf::from(CORPUS));
        paths.extend(args.iter().map(PathBuf::from));
    }
    let per_client: usize = std::env::var("BENCH_REQUESTS").ok().and_then(|v| v.parse().ok()).unwrap_or(250);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = given.clone().unwrap_or_else(|| dir.path().join("lkpbot.db"));

    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let (ids, largest, addr) = rt.block_on(async {
        let started = Instant::now();
        if given.is_none() {
            let store = Store::open(&db).await.expect("store");
            let mut engine = Engine::new(store, Settings::with_classify(ClassifyConfig::default()));
            for p in &paths {
                let errors = engine.ingest_path(p, NOW, &mut |_| {}).await.expect("ingest");
                assert!(errors.is_empty(), "{}: {errors:?}", p.display());
            }
            engine.finish().await.expect("finish");
            engine.sweep_stale(NOW, 30).await.expect("stale");
            engine.into_store().close().await.expect("close");
        }
        let reader = Reader::open(&db).await.expect("reader");
        let all = reader.cases(CaseFilter::All, true).await.expect("cases");
        let open = reader.cases(CaseFilter::Open, false).await.expect("cases").len();
        let from = if paths.is_empty() {
            db.display().to_string()
        } else {
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        };
        println!("store: {} cases ({open} open) from {from} in {:.1} s", all.len(), started.elapsed().as_secs_f64());
        let ids: Vec<i64> = all.iter().map(|c| c.view.id.0).collect();
        let big = all.iter().max_by_key(|c| c.messages.len()).expect("a case");
        println!("largest case: {} ({} messages, {} events)", big.view.id.0, big.messages.len(), big.events.len());
        let largest = big.view.id.0;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let app = lkpbot::web::App::new(reader, || NOW, "https://lore.kernel.org/r/");
        tokio::spawn(lkpbot::web::serve(listener, lkpbot::web::router(app), std::future::pending()));
        (ids, largest, addr)
    });

    // The clients run on a thread and runtime of their own.
    let client = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(drive(addr, ids, largest, per_client))
    });
    client.join().expect("clients");
    if std::env::var_os("BENCH_ROUTES").is_none() {
        rt.block_on(cold(&db));
    }
    drop(rt);
}

/// The lists are read again after every change to the store: their first
/// request after a change, one at a time (each time a new reader, so
/// nothing is cached), in process.
async fn cold(db: &std::path::Path) {
    use tower::ServiceExt;
    println!("\nfirst request after a change (nothing cached, one at a time, in process)\n");
    println!("{:<22} {:>8} {:>8}", "route", "p50 ms", "max ms");
    for path in ["/", "/api/cases"] {
        let mut lat = Vec::new();
        for _ in 0..20 {
            let reader = Reader::open(db).await.expect("reader");
            let router =
                lkpbot::web::router(lkpbot::web::App::new(reader.clone(), || NOW, "https://lore.kernel.org/r/"));
            let req = axum::http::Request::get(path).body(axum::body::Body::empty()).expect("request");
            let t = Instant::now();
            let res = router.oneshot(req).await.expect("response");
            let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
            lat.push(t.elapsed());
            assert!(!body.is_empty());
            reader.close().await;
        }
        lat.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!("{:<22} {:>8.2} {:>8.2}", path, ms(lat[lat.len() / 2]), ms(*lat.last().expect("latencies")));
    }
}

async fn drive(addr: SocketAddr, ids: Vec<i64>, largest: i64, per_client: usize) {
    type Route = (&'static str, Box<dyn Fn(usize) -> String>);
    let n = ids.len();
    let case_ids = ids.clone();
    let api_ids = ids;
    let routes: Vec<Route> = vec![
        ("/healthz (baseline)", Box::new(|_| "/healthz".into())),
        ("/cases/{id}", Box::new(move |i| format!("/cases/{}", case_ids[i % n]))),
        ("/api/cases/{id}", Box::new(move |i| format!("/api/cases/{}", api_ids[i % n]))),
        ("/cases/{largest}", Box::new(move |_| format!("/cases/{largest}"))),
        ("/api/cases/{largest}", Box::new(move |_| format!("/api/cases/{largest}"))),
        ("/ (open cases)", Box::new(|_| "/".into())),
        ("/api/cases (open)", Box::new(|_| "/api/cases".into())),
    ];
    println!("{CLIENTS} clients, {per_client} requests each per route\n");
    println!(
        "{:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10}",
        "route", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "KiB/resp", "p99/base"
    );
    let only = std::env::var("BENCH_ROUTES").unwrap_or_default();
    let mut base_p99 = None;
    for (i, (name, path_of)) in routes.iter().enumerate() {
        if i > 0 && !name.contains(only.as_str()) {
            continue;
        }
        // Warm up: a first pass over a few requests per client.
        run_route(addr, path_of, CLIENTS, 5).await;
        let started = Instant::now();
        let (mut lat, bytes) = run_route(addr, path_of, CLIENTS, per_client).await;
        let wall = started.elapsed();
        lat.sort();
        let pct = |p: f64| lat[((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1];
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let p99 = ms(pct(0.99));
        let base = *base_p99.get_or_insert(p99);
        println!(
            "{:<22} {:>8.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.1} {:>9.1}x",
            name,
            lat.len() as f64 / wall.as_secs_f64(),
            ms(pct(0.50)),
            ms(pct(0.90)),
            p99,
            ms(*lat.last().expect("latencies")),
            bytes as f64 / lat.len() as f64 / 1024.0,
            p99 / base
        );
    }
}

/// `clients` connections at once, each sending `per_client` requests in
/// turn; every latency, and the bytes of all bodies.
async fn run_route(
    addr: SocketAddr,
    path_of: &dyn Fn(usize) -> String,
    clients: usize,
    per_client: usize,
) -> (Vec<Duration>, usize) {
    let paths: Vec<Vec<String>> =
        (0..clients).map(|c| (0..per_client).map(|i| path_of(c * per_client + i)).collect()).collect();
    let tasks: Vec<_> = paths
        .into_iter()
        .map(|paths| {
            tokio::spawn(async move {
                let mut conn = BufReader::new(TcpStream::connect(addr).await.expect("connect"));
                let mut lat = Vec::with_capacity(paths.len());
                let mut bytes = 0;
                for p in paths {
                    let t = Instant::now();
                    let (status, len) = get(&mut conn, &p).await;
                    lat.push(t.elapsed());
                    assert_eq!(status, 200, "{p}");
                    bytes += len;
                }
                (lat, bytes)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut bytes = 0;
    for t in tasks {
        let (lat, b) = t.await.expect("client");
        all.extend(lat);
        bytes += b;
    }
    (all, bytes)
}

/// One GET on a keep-alive connection: the status and the body's length.
async fn get(conn: &mut BufReader<TcpStream>, path: &str) -> (u16, usize) {
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/html\r\n\r\n");
    conn.get_mut().write_all(req.as_bytes()).await.expect("send");
    let mut line = String::new();
    conn.read_line(&mut line).await.expect("status line");
    let status: u16 = line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status");
    let mut len = 0;
    loop {
        line.clear();
        conn.read_line(&mut line).await.expect("header");
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((n, v)) = l.split_once(':')
            && n.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().expect("length");
        }
    }
    let mut body = vec![0; len];
    conn.read_exact(&mut body).await.expect("body");
    (status, len)
}
