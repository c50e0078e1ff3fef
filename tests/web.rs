//! The dashboard and JSON API: the routes through the router in process
//! (status codes, content types, escaping, the API equal to the CLI's
//! JSON, the chart), `lkpbot serve` over real HTTP beside a writer, and
//! a case page rendered by headless Chromium.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use lkpbot::store::{Reader, Store};
use tower::ServiceExt;

use crate::thread::{NOW, block_on, engine};
use crate::util::{self, http};

const ARCHIVE: &str = "https://lore.kernel.org/r/";

/// A store in a temp dir holding the given fixtures of `fixtures/web/`.
fn store(names: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lkpbot.db");
    block_on(async {
        let mut e = engine(Store::open(&db).await.unwrap());
        for n in names {
            let errors = e.ingest_path(&util::fixtures().join("web").join(n), NOW, &mut |_| {}).await.unwrap();
            assert!(errors.is_empty(), "{errors:?}");
        }
        e.finish().await.unwrap();
        e.into_store().close().await.unwrap();
    });
    (dir, db)
}

struct Got {
    status: StatusCode,
    content_type: String,
    csp: Option<String>,
    /// The `Link` header (paging of `/api/cases`).
    link: Option<String>,
    body: String,
}

/// `GET uri` through the router, in process.
fn get(db: &Path, uri: &str, accept: &str) -> Got {
    block_on(async {
        let reader = Reader::open(db).await.unwrap();
        let app = lkpbot::web::router(lkpbot::web::App::new(reader, || NOW, ARCHIVE));
        let req = Request::get(uri).header("accept", accept).body(Body::empty()).unwrap();
        let res = app.oneshot(req).await.unwrap();
        let status = res.status();
        let h = |n: &str| res.headers().get(n).map(|v| v.to_str().unwrap().to_string());
        let (content_type, csp, link) =
            (h("content-type").unwrap_or_default(), h("content-security-policy"), h("link"));
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        Got { status, content_type, csp, link, body: String::from_utf8(bytes.to_vec()).unwrap() }
    })
}

const HTML: &str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8";
const ANY: &str = "*/*";

fn json(g: &Got) -> serde_json::Value {
    assert_eq!(g.content_type, "application/json", "{}", g.body);
    serde_json::from_str(&g.body).unwrap()
}

/// The id of the case whose title contains `needle`.
fn case_with(db: &Path, needle: &str) -> i64 {
    let all = json(&get(db, "/api/cases?state=all", ANY));
    let c = all.as_array().unwrap().iter().find(|c| c["title"].as_str().unwrap().contains(needle));
    c.unwrap_or_else(|| panic!("no case titled {needle:?} in {all}"))["id"].as_i64().unwrap()
}

#[test]
fn routes_answer_with_the_right_status_and_type() {
    let (_dir, db) = store(&["chart-two-fixes.mbox"]);
    let id = case_with(&db, "will-it-scale");
    for (uri, accept, status, ty) in [
        ("/", HTML, 200, "text/html; charset=utf-8"),
        ("/?state=all&sort=severity&kind=perf-regression&tree=linus&testcase=will-it-scale", HTML, 200, "text/html"),
        (&format!("/cases/{id}"), HTML, 200, "text/html"),
        ("/api/cases", ANY, 200, "application/json"),
        ("/api/cases?state=retest-done", ANY, 200, "application/json"),
        (&format!("/api/cases/{id}"), ANY, 200, "application/json"),
        ("/healthz", ANY, 200, "application/json"),
        ("/cases/999999", ANY, 404, "application/json"),
        ("/cases/999999", HTML, 404, "text/html"),
        ("/api/cases/999999", ANY, 404, "application/json"),
        ("/cases/abc", ANY, 400, "application/json"),
        ("/api/cases/99999999999999999999999", ANY, 400, "application/json"),
        ("/api/cases?state=opne", ANY, 400, "application/json"),
        ("/?state=opne", HTML, 400, "text/html"),
        ("/api/cases?colour=red", ANY, 400, "application/json"),
        ("/?sort=size", ANY, 400, "application/json"),
        ("/no/such/page", ANY, 404, "application/json"),
    ] {
        let g = get(&db, uri, accept);
        assert_eq!(g.status.as_u16(), status, "{uri} ({accept}): {}", g.body);
        assert!(g.content_type.starts_with(ty), "{uri}: {}", g.content_type);
        assert!(g.csp.as_deref().is_some_and(|c| c.contains("default-src 'none'")), "{uri}");
        if ty == "application/json" && status >= 400 {
            let e = json(&g);
            assert!(!e["error"].as_str().unwrap().is_empty(), "{uri}: {e}");
        }
    }
    let e = json(&get(&db, "/api/cases?state=opne", ANY));
    assert!(e["error"].as_str().unwrap().contains("retest-requested"), "the error names the states: {e}");
    let h = json(&get(&db, "/healthz", ANY));
    assert_eq!(h, serde_json::json!({"status": "ok", "cases": 1}));
}

/// Subjects, commit subjects, metrics and machine names are the sender's
/// text: on a page they are text, never markup.
#[test]
fn hostile_text_from_mail_is_escaped() {
    let (_dir, db) = store(&["hostile-subject.mbox"]);
    let id = case_with(&db, "alert(1)");
    let api = json(&get(&db, &format!("/api/cases/{id}"), ANY));
    assert!(api["title"].as_str().unwrap().contains("<script>alert(1)</script>"), "JSON keeps the text: {api}");
    assert!(api["commit"]["subject"].as_str().unwrap().contains("<img src=x"), "{api}");
    for uri in ["/", "/?state=all", &format!("/cases/{id}")] {
        let page = get(&db, uri, HTML).body;
        for raw in ["<script", "<img", "<b>", "<marquee", "<svg onload", "onerror=alert(2)>"] {
            assert!(!page.contains(raw), "{uri} has {raw:?} unescaped");
        }
        assert!(page.contains("alert(1)"), "{uri} shows the title as text");
    }
    let page = get(&db, &format!("/cases/{id}"), HTML).body;
    assert!(page.contains("alert(2)"), "the commit subject is shown");
    assert!(page.contains("64 threads"), "the test machine is shown");
    assert!(page.contains("<svg class=\"chart\""), "the hostile metric still gets its chart");
}

/// `/api/cases?state=S` and `/api/cases/{id}` are `cases --json --state S`
/// and `case ID --json`, byte for byte.
#[test]
fn the_api_is_the_cli_json() {
    let (_dir, db) = store(&["chart-two-fixes.mbox", "hostile-subject.mbox"]);
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lkpbot")).arg("--db").arg(&db).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for state in ["open", "all", "retest-done", "resolved"] {
        let api = get(&db, &format!("/api/cases?state={state}"), ANY).body;
        assert_eq!(api, cli(&["cases", "--json", "--state", state]), "state {state}");
    }
    assert_eq!(get(&db, "/api/cases", ANY).body, cli(&["cases", "--json"]));
    let all = json(&get(&db, "/api/cases?state=all", ANY));
    assert_eq!(all.as_array().unwrap().len(), 2);
    for c in all.as_array().unwrap() {
        let id = c["id"].as_i64().unwrap();
        assert_eq!(get(&db, &format!("/api/cases/{id}"), ANY).body, cli(&["case", &id.to_string(), "--json"]));
    }
}

/// The chart: base, bad and both fixes, each with its %stddev as an
/// error bar; the numbers beside it in a table.
#[test]
fn a_case_page_charts_base_bad_and_every_fix() {
    let (_dir, db) = store(&["chart-two-fixes.mbox"]);
    let id = case_with(&db, "will-it-scale");
    let api = json(&get(&db, &format!("/api/cases/{id}"), ANY));
    let retests = api["retests"].as_array().unwrap();
    assert_eq!(retests.len(), 2, "{api}");
    assert_eq!(retests[0]["fix"]["value"], 62000);
    assert_eq!(retests[1]["verdict"], "recovered");
    let page = get(&db, &format!("/cases/{id}"), HTML).body;
    let svg = &page[page.find("<svg class=\"chart\"").unwrap()..page.find("</svg>").unwrap()];
    assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
    assert_eq!(svg.matches("class=\"error-bar\"").count(), 4, "every point has a %stddev: {svg}");
    for label in [">base<", ">bad<", ">fix 1<", ">fix 2<", "1111222233", "4444555566", "(-40.0%)", "(-1.0%)"] {
        assert!(svg.contains(label), "chart lacks {label}: {svg}");
    }
    for cell in ["100,000", "60,000", "62,000", "99,000", "±4%", "-38.0%", "recovered", "not-recovered"] {
        assert!(page.contains(cell), "the table lacks {cell}");
    }
    // Each verdict says how clear it is: the first fix left the metric
    // 38% below the base, the second moved it 65% up from the bad commit.
    for cell in ["<td>not-recovered (clear)</td>", "<td>recovered (clear)</td>"] {
        assert!(page.contains(cell), "the table lacks {cell}");
    }
    assert_eq!((&api["significance"], &api["verdict_significance"]), (&"clear".into(), &"clear".into()), "{api}");
    // The timeline links every message to the archive, and the ids copy.
    assert!(page.contains("href=\"https://lore.kernel.org/r/cccc0004-lkp@intel.com\""), "{page}");
    assert!(page.contains("<code>abcdef0123456789abcdef0123456789abcdef01</code>"));
}

/// A case of `replies` discussion mails after the report of
/// `chart-two-fixes.mbox`, each answering the one before: a long thread.
fn long_thread(replies: usize) -> (tempfile::TempDir, PathBuf) {
    let fixture = std::fs::read_to_string(util::fixtures().join("web/chart-two-fixes.mbox")).unwrap();
    let report = &fixture[..fixture.find("\nFrom dee@example.net").unwrap() + 1];
    let mut mbox = report.to_string();
    let mut parent = "202611021400.cccc0001-lkp@intel.com".to_string();
    for n in 1..=replies {
        let id = format!("long{n:04}@example.net");
        mbox.push_str(&format!(
            "From dee@example.net Tue Nov  3 02:00:00 2026\n\
             Date: Tue, 3 Nov 2026 {:02}:{:02}:00 +0000\n\
             From: Dee Author <dee@example.net>\n\
             To: kernel test robot <oliver.sang@intel.com>\n\
             Subject: Re: [linus:master] [mm] abcdef0123: will-it-scale.per_thread_ops 40.0% regression\n\
             Message-ID: <{id}>\n\
             In-Reply-To: <{parent}>\n\
             References: <{parent}>\n\n\
             Looking at it, part {n}.\n\n",
            n / 60,
            n % 60
        ));
        parent = id;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("long.mbox"), mbox).unwrap();
    let db = dir.path().join("lkpbot.db");
    block_on(async {
        let mut e = engine(Store::open(&db).await.unwrap());
        let errors = e.ingest_path(&dir.path().join("long.mbox"), NOW, &mut |_| {}).await.unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        e.finish().await.unwrap();
        e.into_store().close().await.unwrap();
    });
    (dir, db)
}

/// A long case's page shows its first event, the state's changes and the
/// latest events, with links to the rest in pages; its JSON stays whole.
#[test]
fn a_long_case_page_shows_the_first_and_latest_events() {
    let (_dir, db) = long_thread(250);
    let id = case_with(&db, "will-it-scale");
    let api = json(&get(&db, &format!("/api/cases/{id}"), ANY));
    let events: Vec<&str> =
        api["events"].as_array().unwrap().iter().map(|e| e["message_id"].as_str().unwrap_or("")).collect();
    assert_eq!(events.len(), 251, "{api}");
    let rows = |page: &str| page.matches("<td class=\"when\">").count();
    let page = get(&db, &format!("/cases/{id}"), HTML);
    assert_eq!(page.status, StatusCode::OK);
    let page = page.body;
    // The report, the first reply (it moved the case to discussed), the
    // latest hundred.
    assert_eq!(rows(&page), 102, "{page}");
    assert!(page.contains("102 of 251 events"), "{page}");
    assert!(page.contains(">202611021400.cccc0001-lkp@intel.com<"), "the report stays first: {page}");
    assert!(page.contains(">long0001@example.net<") && !page.contains(">long0002@example.net<"), "{page}");
    assert!(page.contains(">long0250@example.net<") && page.contains(">long0151@example.net<"), "{page}");
    assert!(!page.contains(">long0150@example.net<"), "{page}");
    assert!(page.contains(&format!("<a href=\"/cases/{id}?after=2\">&hellip; 149 more events</a>")), "{page}");
    // The hidden events, a page at a time, in order.
    let part = get(&db, &format!("/cases/{id}?after=1"), HTML).body;
    assert_eq!(rows(&part), 100);
    assert!(part.contains(">long0001@example.net<") && part.contains(">long0100@example.net<"), "{part}");
    assert!(!part.contains(">long0101@example.net<"), "{part}");
    assert!(part.contains(&format!("href=\"/cases/{id}?after=101\">&hellip; 150 later events")), "{part}");
    assert!(part.contains(&format!("href=\"/cases/{id}?after=0\">&hellip; 1 more event<")), "{part}");
    assert!(part.contains(&format!("<a href=\"/cases/{id}\">the first")), "a way back: {part}");
    let small = get(&db, &format!("/cases/{id}?after=240&limit=5"), HTML).body;
    assert!(small.contains(&format!("href=\"/cases/{id}?after=245&#38;limit=5\"")), "limit is kept: {small}");
    assert!(small.contains(&format!("href=\"/cases/{id}?after=235&#38;limit=5\"")), "the page before: {small}");
    // Everything at once, when asked.
    let whole = get(&db, &format!("/cases/{id}?after=0&limit=1000"), HTML).body;
    assert_eq!(rows(&whole), 251);
    for bad in ["?limit=0", "?limit=10001", "?after=x", "?page=2"] {
        assert_eq!(get(&db, &format!("/cases/{id}{bad}"), HTML).status, StatusCode::BAD_REQUEST, "{bad}");
    }
}

/// A long case's page reads only the messages of the events it shows,
/// and shows them as the whole case would: each part of its timeline is
/// the page rendered from the complete record (what `/api/cases/{id}`
/// shows), row for row.
#[test]
fn a_long_case_page_equals_the_page_of_the_whole_case() {
    use askama::Template;
    use lkpbot::web::list::Window;
    let (_dir, db) = long_thread(250);
    let id = case_with(&db, "will-it-scale");
    let api = json(&get(&db, &format!("/api/cases/{id}"), ANY));
    let (whole, others) = block_on(async {
        let reader = Reader::open(&db).await.unwrap();
        let c = reader.case(lkpbot::case::CaseId(id)).await.unwrap().unwrap();
        let related: Vec<_> = c.related.iter().map(|(id, _)| *id).collect();
        let others = reader.views(&related).await.unwrap();
        reader.close().await;
        (c, others)
    });
    assert_eq!(whole.messages.len(), 251, "the whole case holds every message");
    assert_eq!(lkpbot::view::case_json(&whole, ARCHIVE), api, "the record the page is compared with is the API's");
    let windows = [(None, 100), (Some(1), 100), (Some(240), 5), (Some(0), 1000)];
    for (after, limit) in windows {
        let window = Window { limit, after };
        let expected = lkpbot::web::pages::case(&whole, &others, NOW, ARCHIVE, &window).render().unwrap();
        let uri = window.href(id, after);
        let page = get(&db, &uri, HTML);
        assert_eq!(page.status, StatusCode::OK, "{uri}");
        assert_eq!(page.body, lkpbot::text::clean(&expected), "{uri}");
        // Every row shown names its message and who sent it, as the API's
        // event at that place does.
        let shown = lkpbot::web::pages::shown_messages(&whole, &window);
        for m in &shown {
            let m = m.as_str();
            assert!(page.body.contains(&format!("<code class=\"muted\">{m}</code>")), "{uri}: {m}");
        }
        let from = "<span class=\"muted\">dee@example.net</span>";
        assert_eq!(page.body.matches(from).count(), shown.iter().filter(|m| m.as_str().starts_with("long")).count());
    }
}

/// Callers that find the lists' copy stale at once wait for one read of
/// the cases instead of each reading them (on a large store, eight cold
/// `/api/cases` at once held the pool until some timed out with 500).
#[test]
fn concurrent_lists_read_the_cases_once() {
    let (_dir, db) = store(&["chart-two-fixes.mbox"]);
    block_on(async {
        let reader = Reader::open(&db).await.unwrap();
        let copies = futures_util::future::join_all((0..8).map(|_| reader.summary(true))).await;
        let copies: Vec<_> = copies.into_iter().map(Result::unwrap).collect();
        assert!(!copies[0].is_empty());
        assert!(copies.iter().all(|c| std::sync::Arc::ptr_eq(c, &copies[0])), "one shared copy");
        assert_eq!(reader.summary_reads(), 1);
        // Without details: a copy of its own, read once too.
        let plain = futures_util::future::join_all((0..4).map(|_| reader.summary(false))).await;
        assert!(plain.iter().all(|c| c.as_ref().unwrap().len() == copies[0].len()));
        assert_eq!(reader.summary_reads(), 2);
        reader.close().await;
    });
}

#[test]
fn the_list_filters_and_sorts() {
    let (_dir, db) = store(&["chart-two-fixes.mbox", "hostile-subject.mbox"]);
    let rows = |uri: &str| -> Vec<i64> {
        let page = get(&db, uri, HTML).body;
        let body = &page[page.find("<tbody>").unwrap()..];
        body.match_indices("<td class=\"num\"><a href=\"/cases/")
            .map(|(i, m)| {
                let rest = &body[i + m.len()..];
                rest[..rest.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    };
    let wis = case_with(&db, "will-it-scale");
    let hostile = case_with(&db, "alert(1)");
    // What needs someone first by default: the -12.5% no fix has reached
    // before the -40% whose fix recovered it. Newest first by age;
    // severity puts the -40% before the -12.5%.
    assert_eq!(rows("/?state=all"), [hostile, wis]);
    assert_eq!(rows("/?state=all&sort=attention"), [hostile, wis]);
    assert_eq!(rows("/?state=all&sort=age"), [hostile, wis]);
    assert_eq!(rows("/?state=all&sort=severity"), [wis, hostile]);
    assert_eq!(rows("/?state=all&sort=oldest"), [wis, hostile]);
    assert_eq!(rows("/?state=all&testcase=stress-ng"), [hostile]);
    assert_eq!(rows("/?state=all&kind=build"), Vec::<i64>::new());
    assert_eq!(rows("/?state=resolved"), Vec::<i64>::new());
    let api = json(&get(&db, "/api/cases?state=all&testcase=will-it-scale", ANY));
    assert_eq!(api.as_array().unwrap().len(), 1);
    // Both changes are clear of their noise, and the list says so.
    let page = get(&db, "/?state=all", HTML).body;
    assert!(page.contains("<th>significance</th>"), "{page}");
    assert_eq!(page.matches("<span class=\"sig-clear\">clear</span>").count(), 2, "{page}");
}

/// `/api/cases` is complete unless `limit` asks for a page; then `after`
/// goes on, and a `Link` header says where. The HTML list takes `page`.
#[test]
fn the_lists_page() {
    let (_dir, db) = store(&["chart-two-fixes.mbox", "hostile-subject.mbox"]);
    let ids = |g: &Got| -> Vec<i64> { json(g).as_array().unwrap().iter().map(|c| c["id"].as_i64().unwrap()).collect() };
    let all = get(&db, "/api/cases?state=all", ANY);
    assert_eq!(all.link, None);
    let all = ids(&all);
    assert_eq!(all.len(), 2);
    let first = get(&db, "/api/cases?state=all&limit=1", ANY);
    assert_eq!(ids(&first), all[..1]);
    let next = format!("/api/cases?state=all&limit=1&after={}", all[0]);
    assert_eq!(first.link.as_deref(), Some(format!("<{next}>; rel=\"next\"").as_str()));
    let second = get(&db, &next, ANY);
    assert_eq!((ids(&second), second.link), (all[1..].to_vec(), None));
    // A sorted list goes on after the case named, in its own order.
    let sorted = ids(&get(&db, "/api/cases?state=all&sort=severity", ANY));
    let rest = ids(&get(&db, &format!("/api/cases?state=all&sort=severity&after={}", sorted[0]), ANY));
    assert_eq!(rest, sorted[1..]);
    for bad in [
        "/api/cases?limit=0",
        "/api/cases?limit=x",
        "/api/cases?page=2",
        "/?page=0",
        "/?limit=5",
        "/api/cases?sort=severity&after=999",
    ] {
        assert_eq!(get(&db, bad, ANY).status, StatusCode::BAD_REQUEST, "{bad}");
    }
    let page = get(&db, "/?state=all", HTML).body;
    assert!(page.contains("2 cases") && !page.contains("rel=\"next\""), "{page}");
    assert_eq!(get(&db, "/?state=all&page=2", HTML).status, StatusCode::OK);
}

/// `lkpbot serve` on its own process and port.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(db: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
            .arg("--db")
            .arg(db)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("http://127.0.0.1:").nth(1) {
                    let _ = tx.send(rest.trim_end_matches('/').parse::<u16>().unwrap());
                }
            }
        });
        let port = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("serve says where it listens");
        Server { child, port }
    }

    /// SIGTERM, then the exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real server over HTTP, beside a process writing to the same store:
/// what the writer commits shows on the next request, and SIGTERM stops
/// the server cleanly.
#[test]
fn serve_answers_over_http_beside_a_writer() {
    let (_dir, db) = store(&["chart-two-fixes.mbox"]);
    let server = Server::start(&db);
    let port = server.port;
    let index = http::get(port, "/", HTML);
    assert_eq!(index.status, 200);
    assert_eq!(index.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(index.body.contains("will-it-scale.per_thread_ops"), "{}", index.body);
    let health = http::get(port, "/healthz", ANY);
    assert_eq!(health.body.trim(), r#"{"status":"ok","cases":1}"#);
    assert_eq!(http::get(port, "/cases/424242", ANY).status, 404);
    // Both lists are read (and kept) before the writer commits.
    assert!(!http::get(port, "/?state=all", HTML).body.contains("alert(1)"));
    let before: serde_json::Value = serde_json::from_str(&http::get(port, "/api/cases?state=all", ANY).body).unwrap();
    assert_eq!(before.as_array().unwrap().len(), 1);
    let imported = Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .arg("--db")
        .arg(&db)
        .arg("ingest")
        .arg(util::fixtures().join("web/hostile-subject.mbox"))
        .output()
        .unwrap();
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    let all: serde_json::Value = serde_json::from_str(&http::get(port, "/api/cases?state=all", ANY).body).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 2, "the new case shows without a restart");
    let page = http::get(port, "/?state=all", HTML).body;
    assert!(page.contains("alert(1)"), "the list shows the new case: {page}");
    let status = server.stop();
    assert!(status.success(), "serve exits 0 on SIGTERM: {status}");
}

#[test]
fn serve_refuses_a_missing_store_and_a_bad_address() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_lkpbot"))
            .arg("--db")
            .arg(dir.path().join("none.db"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&["serve", "--listen", "localhost-ish"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an address"));
}

/// Headless Chromium with a fresh profile, stopped after two minutes at most.
fn chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .args(["120", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .unwrap()
}

/// A real browser loads a case page from the running server: the chart
/// is in the rendered DOM, and screenshots (desktop and phone width) are
/// saved in the test's temp dir, or in `$LKPBOT_SCREENSHOTS` when set.
#[test]
fn a_browser_renders_the_chart() {
    if !util::dovecot::have("chromium") {
        return;
    }
    let (dir, db) = store(&["chart-two-fixes.mbox"]);
    let server = Server::start(&db);
    let id = case_with(&db, "will-it-scale");
    let url = format!("http://127.0.0.1:{}/cases/{id}", server.port);
    let profile = tempfile::tempdir().unwrap();
    let out = chromium(profile.path(), &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && dom.contains("</html>"), "chromium: {}", String::from_utf8_lossy(&out.stderr));
    let svg = &dom[dom.find("<svg class=\"chart\"").expect("the chart is in the DOM")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
    assert!(dom.contains("case ") && dom.contains("will-it-scale.per_thread_ops"));
    let shots = std::env::var_os("LKPBOT_SCREENSHOTS").map_or_else(|| dir.path().to_path_buf(), PathBuf::from);
    for (name, size) in [("case-page.png", "1200,1400"), ("case-page-phone.png", "420,1600")] {
        let path = shots.join(name);
        let out = chromium(
            profile.path(),
            &[&format!("--screenshot={}", path.display()), &format!("--window-size={size}"), &url],
        );
        assert!(out.status.success(), "chromium: {}", String::from_utf8_lossy(&out.stderr));
        let png = std::fs::read(&path).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} is {} bytes", path.display(), png.len());
    }
    assert!(server.stop().success());
}

/// A case page names its related cases with their state and title.
#[test]
fn related_cases_are_named() {
    let (_dir, db) = store(&["../threads/same-patch-two-shas.mbox"]);
    let fio = case_with(&db, "fio.read_bw_MBps");
    let api = json(&get(&db, &format!("/api/cases/{fio}"), ANY));
    let related: Vec<i64> = api["related"].as_array().unwrap().iter().map(|r| r.as_i64().unwrap()).collect();
    assert!(!related.is_empty(), "{api}");
    let page = get(&db, &format!("/cases/{fio}"), HTML).body;
    let list = &page[page.find("Related cases").expect("a related section")..];
    for id in related {
        let other = json(&get(&db, &format!("/api/cases/{id}"), ANY));
        let title = other["title"].as_str().unwrap();
        let entry = format!(r#"<a href="/cases/{id}">case {id}</a>"#);
        let at = list.find(&entry).unwrap_or_else(|| panic!("no {entry} in {list}"));
        let line = &list[at..at + list[at..].find("</li>").unwrap()];
        assert!(line.contains(other["state"].as_str().unwrap()) && line.contains(title), "{line}");
    }
}
