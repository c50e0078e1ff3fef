//! PostgreSQL beside SQLite (not a test): imports one mbox into a fresh
//! SQLite file and into a fresh PostgreSQL database, in alternating
//! rounds of the same run, and prints the best time of each, their
//! messages per second and the ratio (PostgreSQL's time over SQLite's).
//!
//! ```sh
//! cargo run --release --example bench_pg_ingest -- /tmp/cgroups.mbox postgres://postgres@127.0.0.1:5432/postgres [ROUNDS]
//! ```
//!
//! The URL names a database the user may `CREATE DATABASE` from; each
//! round imports into a new database (`lkpbot_bench_<pid>_<n>`), dropped
//! afterwards. The server is the caller's (recipe 5d of
//! `../shared/docs/STACK.md` starts a private one).

use std::path::Path;
use std::time::Instant;

use lkpbot::classify::ClassifyConfig;
use lkpbot::engine::{Engine, Settings};
use lkpbot::store::{Location, Store};
use sqlx::Connection;

/// 2027-01-15: after every message of the corpus.
const NOW: i64 = 1_800_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mbox), Some(url)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: bench_pg_ingest MBOX POSTGRES_URL [ROUNDS]");
        std::process::exit(1);
    };
    let rounds: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut sqlite, mut pg) = (f64::MAX, f64::MAX);
    let mut messages = 0;
    for round in 0..rounds {
        let file = dir.path().join(format!("s{round}.db"));
        let (t, n) = rt.block_on(import(Path::new(mbox), &Location::Sqlite(file.clone())));
        sqlite = sqlite.min(t);
        messages = n;
        for f in std::fs::read_dir(dir.path()).expect("temp dir").flatten() {
            let _ = std::fs::remove_file(f.path());
        }
        let name = format!("lkpbot_bench_{}_{round}", std::process::id());
        let t = rt.block_on(async {
            let mut admin = sqlx::PgConnection::connect(url).await.expect("connect to the server");
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut admin)
                .await
                .expect("create a database");
            let base = url.rsplit_once('/').map_or(url.as_str(), |(b, _)| b);
            let at = Location::postgres(&format!("{base}/{name}"), None).expect("URL");
            let (t, _) = import(Path::new(mbox), &at).await;
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE {name}")))
                .execute(&mut admin)
                .await
                .expect("drop the database");
            t
        });
        pg = pg.min(t);
        eprintln!("round {}: SQLite {sqlite:.2} s, PostgreSQL {pg:.2} s (best so far)", round + 1);
    }
    let rate = |t: f64| messages as f64 / t;
    println!("messages                 {messages}");
    println!("SQLite ingest            {sqlite:.2} s  {:.0} msg/s", rate(sqlite));
    println!("PostgreSQL ingest        {pg:.2} s  {:.0} msg/s", rate(pg));
    println!("PostgreSQL / SQLite      {:.2}x the time", pg / sqlite);
}

/// One import into a fresh store at `at`: seconds and messages read.
async fn import(mbox: &Path, at: &Location) -> (f64, u64) {
    let t = Instant::now();
    let store = Store::connect(at).await.expect("open the store");
    let mut engine = Engine::new(store, Settings::with_classify(ClassifyConfig::default()));
    let failed = engine.ingest_path(mbox, NOW, &mut |_| {}).await.expect("ingest");
    assert!(failed.is_empty(), "archive not read to the end: {failed:?}");
    let stats = engine.finish().await.expect("finish");
    engine.sweep_stale(NOW, 30).await.expect("sweep");
    engine.into_store().close().await.expect("close");
    (t.elapsed().as_secs_f64(), stats.read)
}
