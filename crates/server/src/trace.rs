//! Structured logs with a request id on every line of a request, and no secrets: the span
//! holds the method, the path (round ids are not secrets; tokens travel only in the
//! `Authorization` header, which is never logged) and the id the server made (a client's own
//! `x-request-id` is not trusted into the logs).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::{self, Next};
use axum::response::Response;
use tracing::Instrument as _;

/// Request ids: a per-process prefix (so two runs' logs do not share ids) and a counter.
static NEXT: AtomicU64 = AtomicU64::new(0);

fn prefix() -> u32 {
    use std::sync::OnceLock;
    static PREFIX: OnceLock<u32> = OnceLock::new();
    *PREFIX.get_or_init(|| {
        use rand_core::RngCore as _;
        rand_core::OsRng.next_u32()
    })
}

/// Wraps every request of `router` in a span with its id, logs its answer and sends the id
/// back as `x-request-id`.
pub(crate) fn layers<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    router.layer(middleware::from_fn(with_request_id))
}

async fn with_request_id(request: Request, next: Next) -> Response {
    let id = format!(
        "{:08x}-{:x}",
        prefix(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let span = tracing::info_span!(
        "request",
        id = %id,
        method = %request.method(),
        path = %request.uri().path()
    );
    async move {
        let started = Instant::now();
        let mut response = next.run(request).await;
        tracing::info!(
            status = response.status().as_u16(),
            ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "answered"
        );
        response.headers_mut().insert(
            "x-request-id",
            HeaderValue::from_str(&id).expect("invariant: an id is hex and a dash"),
        );
        response
    }
    .instrument(span)
    .await
}
