//! The refget v1 routes on axum: `/sequence/service-info`, `/sequence/{id}` (with `start`
//! and `end` or a `Range` header) and `/sequence/{id}/metadata`, their status codes as the
//! specification gives them, and an access log in the common log format.

use super::Catalogue;
use crate::output::{chatty, note};
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::StreamExt;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The media type of sequence bodies (refget v1).
const SEQUENCE_TYPE: &str = "text/vnd.ga4gh.refget.v1.0.0+plain";
/// The media type of JSON bodies (refget v1).
const JSON_TYPE: &str = "application/vnd.ga4gh.refget.v1.0.0+json";
/// Bases read (and held) a read at most: larger answers are streamed piece by piece.
const PIECE: u64 = 1 << 20;

/// What every handler shares.
pub struct Shared {
    catalogue: Arc<Catalogue>,
    /// One permit a region read in flight (`--max-concurrent`).
    reads: Arc<Semaphore>,
}

/// The router of the refget routes over `catalogue`, with reads bounded by `max_concurrent`
/// and every request logged.
pub fn router(catalogue: Arc<Catalogue>, max_concurrent: usize) -> Router {
    let shared = Arc::new(Shared {
        catalogue,
        reads: Arc::new(Semaphore::new(max_concurrent)),
    });
    Router::new()
        .route("/sequence/service-info", get(service_info))
        .route("/sequence/{id}", get(sequence))
        .route("/sequence/{id}/metadata", get(metadata))
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such route (refget v1: /sequence/...)",
            )
        })
        .with_state(shared)
        .layer(axum::middleware::from_fn(access_log))
}

/// Binds `listen`, serves until SIGINT or SIGTERM, then finishes the requests in flight.
/// Sequences whose identifiers the start-up message lists.
const MAX_LISTED: usize = 100;

pub async fn serve(
    catalogue: Arc<Catalogue>,
    listen: &str,
    max_concurrent: usize,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    let addr = listener.local_addr().context("reading the bound address")?;
    note(format!(
        "aceapex: refget server on http://{addr}/sequence/ : {} from {}",
        crate::output::count(catalogue.entries.len() as u64, "sequence"),
        catalogue
            .sources
            .iter()
            .map(|s| s.describe())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // the identifiers a client asks for, one line a sequence (refget has no listing)
    for e in catalogue.entries.iter().take(MAX_LISTED) {
        note(format!(
            "aceapex:   {}  md5 {}  {}",
            e.name,
            e.digests.md5_hex(),
            e.digests.ga4gh_id()
        ));
    }
    if catalogue.entries.len() > MAX_LISTED {
        note(format!(
            "aceapex:   ... and {} more",
            catalogue.entries.len() - MAX_LISTED
        ));
    }
    let app = router(catalogue, max_concurrent);
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown_signal())
    .await
    .context("serving")?;
    note("aceapex: stopped");
    Ok(())
}

/// Resolves on the first SIGINT or SIGTERM; a second one ends the process at once.
async fn shutdown_signal() {
    let name = next_signal().await;
    note(format!(
        "aceapex: {name}: finishing the requests in flight (again to stop now)"
    ));
    tokio::spawn(async {
        let name = next_signal().await;
        eprintln!("aceapex: {name}: interrupted");
        std::process::exit(crate::signal::EXIT_INTERRUPTED);
    });
}

/// The name of the next SIGINT or SIGTERM received.
async fn next_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}

/// A plain-text error answer.
fn error(status: StatusCode, msg: impl Into<String>) -> Response {
    let mut body = msg.into();
    body.push('\n');
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=us-ascii")],
        body,
    )
        .into_response()
}

/// The first of `offers` that the request's `Accept` header allows (a media range with the
/// type, `type/*` or `*/*`, and a q-value above 0); the first offer without the header.
/// `None`: answer 406.
fn negotiate(headers: &HeaderMap, offers: &[&'static str]) -> Option<&'static str> {
    let values: Vec<&HeaderValue> = headers.get_all(header::ACCEPT).iter().collect();
    if values.is_empty() {
        return offers.first().copied();
    }
    let mut ranges = Vec::new();
    for v in values {
        let v = v.to_str().ok()?;
        for part in v.split(',') {
            let mut it = part.split(';');
            let media = it.next().unwrap_or("").trim().to_ascii_lowercase();
            if media.is_empty() {
                continue;
            }
            let q = it
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            ranges.push((media, q));
        }
    }
    if ranges.is_empty() {
        return offers.first().copied();
    }
    offers.iter().copied().find(|offer| {
        ranges.iter().any(|(m, q)| {
            *q > 0.0
                && (m == "*/*"
                    || m == offer
                    || m.strip_suffix('*')
                        .is_some_and(|major| major.ends_with('/') && offer.starts_with(major)))
        })
    })
}

/// A decimal of ASCII digits only, as a `u64`; `None` for anything else (sign, space, empty,
/// overflow).
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `start` and `end` of a query string; `Err` (400) for a value that is not a decimal or a
/// parameter given twice. Other parameters are ignored.
fn parse_query(query: Option<&str>) -> Result<(Option<u64>, Option<u64>), &'static str> {
    let (mut start, mut end) = (None, None);
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let slot = match k {
            "start" => &mut start,
            "end" => &mut end,
            _ => continue,
        };
        if slot.is_some() {
            return Err("start or end given twice");
        }
        *slot = Some(digits(v).ok_or("start and end must be unsigned integers")?);
    }
    Ok((start, end))
}

/// The `Range` header's `bytes=FIRST-LAST` (or `bytes=FIRST-`); `Err` (400) for any other
/// form (other units, suffix ranges, several ranges, anything not a decimal).
fn parse_range(v: &HeaderValue) -> Result<(u64, Option<u64>), &'static str> {
    const BAD: &str = "Range must be bytes=FIRST-LAST (one range, decimals)";
    let spec = v
        .to_str()
        .ok()
        .and_then(|s| s.trim().strip_prefix("bytes="))
        .ok_or(BAD)?;
    let (first, last) = spec.split_once('-').ok_or(BAD)?;
    let first = digits(first).ok_or(BAD)?;
    let last = match last {
        "" => None,
        l => Some(digits(l).ok_or(BAD)?),
    };
    Ok((first, last))
}

/// `GET /sequence/{id}`: the bases, whole or a sub-sequence (refget v1 "Method: Get
/// sequence by ID").
async fn sequence(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let Some(media) = negotiate(&headers, &[SEQUENCE_TYPE, "text/plain"]) else {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            format!("sequences are sent as {SEQUENCE_TYPE} or text/plain"),
        );
    };
    let (start, end) = match parse_query(uri.query()) {
        Ok(v) => v,
        Err(msg) => return error(StatusCode::BAD_REQUEST, msg),
    };
    let range = match headers.get(header::RANGE).map(parse_range).transpose() {
        Ok(r) => r,
        Err(msg) => return error(StatusCode::BAD_REQUEST, msg),
    };
    if range.is_some() && (start.is_some() || end.is_some()) {
        return error(
            StatusCode::BAD_REQUEST,
            "a Range header and start/end cannot be combined",
        );
    }
    let cat = &shared.catalogue;
    let Some(e) = cat.lookup(&id) else {
        return error(StatusCode::NOT_FOUND, format!("no sequence {id}"));
    };
    let entry = &cat.entries[e];
    let len = entry.digests.length;
    let unsatisfiable = |msg: String| {
        let mut r = error(StatusCode::RANGE_NOT_SATISFIABLE, msg);
        if let Ok(v) = HeaderValue::from_str(&format!("bytes */{len}")) {
            r.headers_mut().insert(header::CONTENT_RANGE, v);
        }
        r
    };
    let (status, segments, content_range) = if let Some((first, last)) = range {
        if last.is_some_and(|l| first > l) {
            return unsatisfiable(format!("first byte {first} after the last"));
        }
        if first >= len {
            return unsatisfiable(format!(
                "first byte {first} past the sequence's {len} bases"
            ));
        }
        let last = last.unwrap_or(len - 1).min(len - 1);
        (
            StatusCode::PARTIAL_CONTENT,
            vec![(first, last + 1)],
            Some(format!("bytes {first}-{last}/{len}")),
        )
    } else {
        let s = start.unwrap_or(0);
        let t = end.unwrap_or(len);
        if start.is_some() && s >= len && len > 0 {
            return unsatisfiable(format!("start {s} past the sequence's {len} bases"));
        }
        if t > len {
            return unsatisfiable(format!("end {t} past the sequence's {len} bases"));
        }
        let segments = if s <= t {
            vec![(s, t)]
        } else if entry.circular {
            // refget: on a circular sequence start > end wraps round its end
            vec![(s, len), (0, t)]
        } else {
            return unsatisfiable(format!(
                "start {s} after end {t} on a sequence that is not circular"
            ));
        };
        (StatusCode::OK, segments, None)
    };
    let total: u64 = segments.iter().map(|(b, e)| e - b).sum();
    let mut pieces = Vec::new();
    for (b, e) in segments {
        let mut p = b;
        while p < e {
            let q = (p + PIECE).min(e);
            pieces.push((p, q));
            p = q;
        }
    }
    // the first piece is read before the headers go, so that a failure is a 500
    let first = match pieces.first() {
        Some(&(b, t)) => match read_piece(shared.clone(), e, b, t).await {
            Ok(bytes) => bytes,
            Err(err) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("{err:#}")),
        },
        None => Bytes::new(),
    };
    let body = if pieces.len() <= 1 {
        Body::from(first)
    } else {
        let rest = pieces[1..].to_vec();
        let tail = futures_util::stream::iter(rest).then(move |(b, t)| {
            let shared = shared.clone();
            async move {
                read_piece(shared, e, b, t)
                    .await
                    .map_err(std::io::Error::other)
            }
        });
        Body::from_stream(futures_util::stream::once(async move { Ok(first) }).chain(tail))
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(total));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Some(cr) = content_range.and_then(|s| HeaderValue::from_str(&s).ok()) {
        h.insert(header::CONTENT_RANGE, cr);
    }
    r
}

/// Bases `beg..end` of entry `e`, uppercased, read on the blocking pool under a permit of
/// `shared.reads`.
async fn read_piece(shared: Arc<Shared>, e: usize, beg: u64, end: u64) -> anyhow::Result<Bytes> {
    let permit = shared.reads.clone().acquire_owned().await?;
    let cat = shared.catalogue.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let entry = &cat.entries[e];
        let mut bases = cat.sources[entry.source].read(entry.id, beg, end)?;
        bases.make_ascii_uppercase();
        Ok(Bytes::from(bases))
    })
    .await?
}

/// `GET /sequence/{id}/metadata` (refget v1 "Method: Get known metadata for an id").
async fn metadata(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(media) = negotiate(&headers, &[JSON_TYPE, "application/json"]) else {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            format!("metadata is sent as {JSON_TYPE} or application/json"),
        );
    };
    let cat = &shared.catalogue;
    let Some(e) = cat.lookup(&id) else {
        return error(StatusCode::NOT_FOUND, format!("no sequence {id}"));
    };
    let entry = &cat.entries[e];
    let d = &entry.digests;
    let body = serde_json::json!({
        "metadata": {
            "id": d.md5_hex(),
            "md5": d.md5_hex(),
            "trunc512": d.trunc512(),
            "ga4gh": d.ga4gh_id(),
            "length": d.length,
            "aliases": [
                { "alias": entry.name, "naming_authority": "unknown" },
                { "alias": d.ga4gh_id(), "naming_authority": "ga4gh" },
            ],
        }
    });
    json(media, &body)
}

/// `GET /sequence/service-info` (refget v1 "Method: Fetch information on the service").
async fn service_info(headers: HeaderMap) -> Response {
    let Some(media) = negotiate(&headers, &[JSON_TYPE, "application/json"]) else {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            format!("service-info is sent as {JSON_TYPE} or application/json"),
        );
    };
    let body = serde_json::json!({
        "service": {
            "supported_api_versions": ["1.0.0"],
            "circular_supported": true,
            "subsequence_limit": null,
            "algorithms": ["md5", "trunc512", "ga4gh"],
        }
    });
    json(media, &body)
}

fn json(media: &'static str, body: &serde_json::Value) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(media))],
        body.to_string(),
    )
        .into_response()
}

/// Logs each request on standard error in the common log format (host, time, request line,
/// status, body bytes), unless `--quiet`.
async fn access_log(
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
    next: Next,
) -> Response {
    let line = format!(
        "{} {} {:?}",
        req.method(),
        req.uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/"),
        req.version()
    );
    let r = next.run(req).await;
    if chatty() {
        use axum::body::HttpBody;
        let bytes = r
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
            .or_else(|| r.body().size_hint().exact())
            .map_or_else(|| "-".to_string(), |n| n.to_string());
        eprintln!(
            "{} - - [{}] \"{}\" {} {}",
            peer.ip(),
            clf_time(std::time::SystemTime::now()),
            line.escape_default(),
            r.status().as_u16(),
            bytes
        );
    }
    r
}

/// `t` in the common log format's time form, UTC: `06/Dec/2026:08:15:54 +0000`.
fn clf_time(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // civil date from days since 1970-01-01 (Howard Hinnant's days_from_civil inverse)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{day:02}/{}/{year}:{:02}:{:02}:{:02} +0000",
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clf_time_known_dates() {
        let at = |s| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s);
        assert_eq!(clf_time(at(0)), "01/Jan/1970:00:00:00 +0000");
        // `date -u -d @951782400`: Tue Feb 29 00:00:00 UTC 2000
        assert_eq!(clf_time(at(951_782_400)), "29/Feb/2000:00:00:00 +0000");
        // `date -u -d @1796544954`
        assert_eq!(clf_time(at(1_796_544_954)), "06/Dec/2026:08:15:54 +0000");
    }

    #[test]
    fn accept_negotiation() {
        let mut h = HeaderMap::new();
        let offers = [SEQUENCE_TYPE, "text/plain"];
        assert_eq!(negotiate(&h, &offers), Some(SEQUENCE_TYPE));
        for (accept, want) in [
            ("text/plain", Some("text/plain")),
            ("text/*", Some(SEQUENCE_TYPE)),
            ("*/*", Some(SEQUENCE_TYPE)),
            ("embl/some_json", None),
            ("application/json, text/plain;q=0", None),
            ("TEXT/VND.GA4GH.REFGET.V1.0.0+PLAIN", Some(SEQUENCE_TYPE)),
        ] {
            h.insert(header::ACCEPT, HeaderValue::from_static(accept));
            assert_eq!(negotiate(&h, &offers), want, "{accept}");
        }
    }

    #[test]
    fn range_and_query_forms() {
        let r = |s: &'static str| parse_range(&HeaderValue::from_static(s));
        assert_eq!(r("bytes=10-19"), Ok((10, Some(19))));
        assert_eq!(r("bytes=10-"), Ok((10, None)));
        for bad in [
            "units=20-30",
            "bytes=ab-19",
            "bytes=-10--19",
            "bytes=10--19",
            "bytes=-10-",
            "bytes==10-19",
            "bytes=-10",
            "bytes=1-2,4-5",
            "bytes=+1-2",
        ] {
            assert!(r(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_query(Some("&end=230218")), Ok((None, Some(230_218))));
        assert_eq!(parse_query(Some("start=1&x=y")), Ok((Some(1), None)));
        assert_eq!(parse_query(None), Ok((None, None)));
        for bad in [
            "start=abc",
            "start=-10&end=-29",
            "start=",
            "start=1&start=2",
            "end=99999999999999999999999",
        ] {
            assert!(parse_query(Some(bad)).is_err(), "{bad}");
        }
    }
}
