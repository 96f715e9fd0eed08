//! Logging with `tracing`: human-readable by default, JSON when configured; `RUST_LOG`
//! overrides the configured level. One line per HTTP request comes from `request_log`.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use tracing_subscriber::EnvFilter;

use crate::config::{LogFormat, LoggingSettings};

pub fn init(cfg: &LoggingSettings) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&cfg.level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match cfg.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

pub async fn request_log(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".into());
    let doc = req.match_info().get("id").map(str::to_string);
    let user = crate::http::auth::ResolvedUser::default();
    req.extensions_mut().insert(user.clone());
    let metrics = req
        .app_data::<actix_web::web::Data<crate::http::state::AppState>>()
        .map(|s| s.metrics.clone());
    let res = next.call(req).await?;
    if let Some(m) = metrics {
        let status = res.status().as_u16().to_string();
        m.http_requests
            .with_label_values(&[route.as_str(), method.as_str(), status.as_str()])
            .inc();
        m.http_seconds
            .with_label_values(&[route.as_str()])
            .observe(started.elapsed().as_secs_f64());
        if route.ends_with("/sync") {
            m.sync_seconds.observe(started.elapsed().as_secs_f64());
        }
    }
    tracing::info!(
        target: "docsync::http",
        %method,
        route = %route,
        status = res.status().as_u16(),
        micros = started.elapsed().as_micros() as u64,
        doc = doc.as_deref().unwrap_or("-"),
        user = user.0.get().map(String::as_str).unwrap_or("-"),
        "request"
    );
    Ok(res)
}
