//! `lkpbot serve`: the read-only dashboard and JSON API over a store.
//!
//! Routes (DESIGN.md, "Interfaces"): `/` the open cases, filterable and
//! sortable; `/cases/{id}` one case with its chart; `/api/cases?state=S`
//! and `/api/cases/{id}`, the JSON of `cases --json` and `case --json`
//! (the same [`view::case_json`], byte for byte); `/healthz`.
//!
//! Every request reads through a [`Reader`]: one short read transaction,
//! no lock kept between requests, so `serve` runs beside `run` on the
//! same SQLite file. The only module that speaks HTTP.
//!
//! Errors: a bad parameter is 400, an unknown case or route 404, a store
//! failure 500, each with `{"error": "..."}`, or as a page when the
//! client asked for HTML (a browser).

pub mod list;
pub mod pages;

use std::future::Future;
use std::sync::{Arc, Mutex};

use askama::Template;
use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::case::CaseRecord;
use crate::case::{CaseId, CaseState};
use crate::store::Reader;
use crate::view;

/// What every handler shares.
#[derive(Clone)]
pub struct App {
    reader: Reader,
    /// The wall clock (seconds), for ages; tests fix it.
    clock: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// Where messages are archived: `<archive><message-id>`.
    archive: Arc<str>,
    /// Each case of the reader's last summary with details as its JSON
    /// text, so `/api/cases` serializes a case once per store change.
    case_texts: Arc<Mutex<Option<CaseTexts>>>,
}

/// A summary and its cases' JSON, case by case in the same order.
type CaseTexts = (Arc<Vec<CaseRecord>>, Arc<Vec<String>>);

impl App {
    pub fn new(reader: Reader, clock: impl Fn() -> i64 + Send + Sync + 'static, archive: &str) -> App {
        App { reader, clock: Arc::new(clock), archive: archive.into(), case_texts: Arc::default() }
    }

    /// The JSON of every case of `all` (a summary with details), made
    /// once per summary.
    fn case_texts(&self, all: &Arc<Vec<CaseRecord>>) -> Arc<Vec<String>> {
        let cached = || self.case_texts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((of, texts)) = &*cached()
            && Arc::ptr_eq(of, all)
        {
            return texts.clone();
        }
        let texts: Arc<Vec<String>> =
            Arc::new(all.iter().map(|c| view::case_json(c, &self.archive).to_string()).collect());
        *cached() = Some((all.clone(), texts.clone()));
        texts
    }
}

/// The routes, ready to serve or to call in process.
pub fn router(app: App) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/cases/{id}", get(case_page))
        .route("/api/cases", get(api_cases))
        .route("/api/cases/{id}", get(api_case))
        .route("/healthz", get(healthz))
        .fallback(not_found)
        .layer(axum::middleware::map_response(secure_headers))
        .with_state(app)
}

/// Serves `router` on `listener` until `shutdown` completes; requests in
/// flight are answered first.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router).with_graceful_shutdown(shutdown).await
}

/// Everything from mail is escaped; these keep a browser from guessing
/// types or running anything that slipped through anyway.
async fn secure_headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'",
        ),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// Whether the client asked for a page rather than data.
fn wants_html(headers: &HeaderMap) -> bool {
    headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/html"))
}

/// A failed request: its status and what to tell the client.
struct HttpFailure {
    status: StatusCode,
    message: String,
    html: bool,
}

impl HttpFailure {
    fn new(status: StatusCode, message: impl Into<String>) -> HttpFailure {
        HttpFailure { status, message: message.into(), html: false }
    }

    fn bad(message: impl Into<String>) -> HttpFailure {
        HttpFailure::new(StatusCode::BAD_REQUEST, message)
    }

    fn store(e: crate::store::StoreError) -> HttpFailure {
        tracing::error!(error = %e, "cannot read the store");
        HttpFailure::new(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot read the store: {e}"))
    }

    fn into_html(self, html: bool) -> HttpFailure {
        HttpFailure { html, ..self }
    }
}

impl IntoResponse for HttpFailure {
    fn into_response(self) -> Response {
        if self.html {
            let page = pages::Error { status: self.status.to_string(), message: self.message.clone() };
            if let Ok(body) = page.render() {
                return (self.status, html_type(), crate::text::clean(&body).into_owned()).into_response();
            }
        }
        let body = format!("{}\n", serde_json::json!({"error": self.message}));
        (self.status, json_type(), body).into_response()
    }
}

fn html_type() -> [(header::HeaderName, &'static str); 1] {
    [(header::CONTENT_TYPE, "text/html; charset=utf-8")]
}

fn json_type() -> [(header::HeaderName, &'static str); 1] {
    [(header::CONTENT_TYPE, "application/json")]
}

fn page(t: &impl Template) -> Result<Response, HttpFailure> {
    let body =
        t.render().map_err(|e| HttpFailure::new(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot render: {e}")))?;
    // Escaped for HTML, text from mail may still hold control characters
    // and bidi overrides: none reaches a page.
    Ok((html_type(), crate::text::clean(&body).into_owned()).into_response())
}

/// JSON as the CLI prints it: one value and a newline.
fn json(v: &serde_json::Value) -> Response {
    (json_type(), format!("{v}\n")).into_response()
}

fn query(q: Result<Query<list::Params>, QueryRejection>) -> Result<list::Query, HttpFailure> {
    let Query(p) = q.map_err(|e| HttpFailure::bad(format!("bad query: {}", e.body_text())))?;
    list::Query::parse(p).map_err(HttpFailure::bad)
}

/// A case id from the path: a number, else 400.
fn case_id(p: Result<Path<String>, PathRejection>) -> Result<CaseId, HttpFailure> {
    let Path(raw) = p.map_err(|e| HttpFailure::bad(e.body_text()))?;
    raw.parse::<i64>().map(CaseId).map_err(|_| HttpFailure::bad(format!("case ids are numbers, not {raw:?}")))
}

async fn index(
    State(app): State<App>,
    headers: HeaderMap,
    q: Result<Query<list::Params>, QueryRejection>,
) -> Result<Response, HttpFailure> {
    let html = wants_html(&headers);
    let q = query(q).map_err(|f| f.into_html(html))?;
    if q.limit.is_some() || q.after.is_some() {
        return Err(HttpFailure::bad("the page list takes page=N; limit and after are for /api/cases").into_html(html));
    }
    let all = app.reader.summary(false).await.map_err(|e| HttpFailure::store(e).into_html(html))?;
    let counts: Vec<(CaseState, i64)> =
        CaseState::ALL.iter().map(|s| (*s, all.iter().filter(|c| c.view.state == *s).count() as i64)).collect();
    let cases = list::select(all.iter(), &q, (app.clock)());
    page(&pages::index(&q, &cases, &counts, (app.clock)())).map_err(|f| f.into_html(html))
}

async fn case_page(
    State(app): State<App>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
    q: Result<Query<list::CaseParams>, QueryRejection>,
) -> Result<Response, HttpFailure> {
    let html = wants_html(&headers);
    let id = case_id(id).map_err(|f| f.into_html(html))?;
    let Query(q) = q.map_err(|e| HttpFailure::bad(format!("bad query: {}", e.body_text())).into_html(html))?;
    let window = list::Window::parse(q).map_err(|e| HttpFailure::bad(e).into_html(html))?;
    // Of the case's messages, only those of the events shown are read.
    let shown = |c: &CaseRecord| pages::shown_messages(c, &window);
    let part = app.reader.case_part(id, shown).await.map_err(|e| HttpFailure::store(e).into_html(html))?;
    let Some((c, others)) = part else {
        return Err(HttpFailure::new(StatusCode::NOT_FOUND, format!("no case {}", id.0)).into_html(html));
    };
    page(&pages::case(&c, &others, (app.clock)(), &app.archive, &window)).map_err(|f| f.into_html(html))
}

/// `/api/cases`: `state` as `cases --state` (and the list's other
/// filters); the order is the CLI's (by id) unless `sort` asks. Every
/// case by default; with `limit` at most that many, after the case
/// `after` (a `Link: <...>; rel="next"` header says where the rest is).
async fn api_cases(
    State(app): State<App>,
    q: Result<Query<list::Params>, QueryRejection>,
    uri: axum::http::Uri,
) -> Result<Response, HttpFailure> {
    let sorted = matches!(&q, Ok(Query(p)) if p.sort.as_deref().is_some_and(|s| !s.is_empty()));
    let q = query(q)?;
    if q.page != 1 {
        return Err(HttpFailure::bad("/api/cases pages with limit and after, not page"));
    }
    let all = app.reader.summary(true).await.map_err(HttpFailure::store)?;
    let cases: Vec<&CaseRecord> = if sorted {
        list::select(all.iter(), &q, (app.clock)())
    } else {
        all.iter().filter(|c| q.selects(c)).collect()
    };
    let (cases, more) = list::slice(cases, q.after, q.limit, !sorted).map_err(HttpFailure::bad)?;
    let next = match cases.last() {
        Some(last) if more => Some(next_link(&uri, last.view.id.0)),
        _ => None,
    };
    // The summary is in id order; the body is what `cases --json` prints.
    let texts = app.case_texts(&all);
    let text = |c: &CaseRecord| all.binary_search_by_key(&c.view.id, |x| x.view.id).map(|i| texts[i].as_str());
    let mut body =
        String::with_capacity(cases.iter().filter_map(|c| text(c).ok()).map(|t| t.len() + 1).sum::<usize>() + 2);
    body.push('[');
    for (n, c) in cases.into_iter().enumerate() {
        if n > 0 {
            body.push(',');
        }
        body.push_str(text(c).unwrap_or("null"));
    }
    body.push_str("]\n");
    let mut res = (json_type(), body).into_response();
    if let Some(link) = next.and_then(|l| header::HeaderValue::from_str(&format!("<{l}>; rel=\"next\"")).ok()) {
        res.headers_mut().insert(header::LINK, link);
    }
    Ok(res)
}

/// The request's own path and query with `after` set to `last`.
fn next_link(uri: &axum::http::Uri, last: i64) -> String {
    let kept: Vec<&str> =
        uri.query().unwrap_or("").split('&').filter(|p| !p.is_empty() && !p.starts_with("after=")).collect();
    let mut q = kept.join("&");
    if !q.is_empty() {
        q.push('&');
    }
    format!("{}?{q}after={last}", uri.path())
}

async fn api_case(State(app): State<App>, id: Result<Path<String>, PathRejection>) -> Result<Response, HttpFailure> {
    let id = case_id(id)?;
    match app.reader.case(id).await.map_err(HttpFailure::store)? {
        Some(c) => Ok(json(&view::case_json(&c, &app.archive))),
        None => Err(HttpFailure::new(StatusCode::NOT_FOUND, format!("no case {}", id.0))),
    }
}

/// `{"status": "ok", "cases": N}` when the store answers.
async fn healthz(State(app): State<App>) -> Result<Response, HttpFailure> {
    let counts = app.reader.state_counts().await.map_err(|e| {
        tracing::error!(error = %e, "health check");
        HttpFailure::new(StatusCode::SERVICE_UNAVAILABLE, format!("the store does not answer: {e}"))
    })?;
    let cases: i64 = counts.iter().map(|(_, n)| n).sum();
    Ok(json(&serde_json::json!({"status": "ok", "cases": cases})))
}

async fn not_found(headers: HeaderMap, uri: axum::http::Uri) -> HttpFailure {
    HttpFailure::new(StatusCode::NOT_FOUND, format!("no such page: {}", uri.path())).into_html(wants_html(&headers))
}
