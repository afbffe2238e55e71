//! A HAR 1.2 file written from the DevTools Network events a headless
//! Chromium sent while it visited pages (`Network.requestWillBeSent`,
//! `Network.responseReceived`, `Network.loadingFinished`), as Chromium's
//! own DevTools "Save all as HAR" lays one out (chromium/src,
//! third_party/devtools-frontend/src/front_end/models/har/Log.ts): an
//! entry per request in the order they started, its method, URL, headers
//! and body, the response's status, headers and content, the timings, and
//! DevTools' `_resourceType`.

use serde_json::{json, Value};

/// The HAR of `events` (requests that got no response are left out).
pub fn har_from_network_events(events: &[Value]) -> Value {
    let of = |method: &str, id: &str| {
        events
            .iter()
            .find(|e| e["method"] == method && e["params"]["requestId"] == id)
            .map(|e| &e["params"])
    };
    let mut entries = Vec::new();
    for sent in events
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
    {
        let sent = &sent["params"];
        let id = sent["requestId"].as_str().unwrap_or_default();
        let Some(received) = of("Network.responseReceived", id) else {
            continue;
        };
        let request = &sent["request"];
        let response = &received["response"];
        let started = sent["timestamp"].as_f64().unwrap_or_default();
        let finished = of("Network.loadingFinished", id)
            .and_then(|f| f["timestamp"].as_f64())
            .unwrap_or(started);
        let answered = received["timestamp"].as_f64().unwrap_or(started);
        let url = request["url"].as_str().unwrap_or_default();
        let mut entry_request = json!({
            "method": request["method"],
            "url": url,
            "httpVersion": response["protocol"].as_str().map_or("HTTP/1.1".to_string(), str::to_uppercase),
            "cookies": [],
            "headers": name_values(&request["headers"]),
            "queryString": query_string(url),
            "headersSize": -1,
            "bodySize": request["postData"].as_str().map_or(0, str::len),
        });
        if let Some(body) = request["postData"].as_str() {
            let mime = header(&request["headers"], "content-type").unwrap_or_default();
            entry_request["postData"] = json!({ "mimeType": mime, "text": body });
        }
        entries.push(json!({
            "startedDateTime": rfc3339(sent["wallTime"].as_f64().unwrap_or_default()),
            "time": (finished - started) * 1000.0,
            "request": entry_request,
            "response": {
                "status": response["status"],
                "statusText": response["statusText"],
                "httpVersion": response["protocol"].as_str().map_or("HTTP/1.1".to_string(), str::to_uppercase),
                "cookies": [],
                "headers": name_values(&response["headers"]),
                "content": {
                    "size": response["encodedDataLength"].as_f64().unwrap_or(0.0),
                    "mimeType": response["mimeType"],
                },
                "redirectURL": "",
                "headersSize": -1,
                "bodySize": -1,
            },
            "cache": {},
            "timings": {
                "send": 0,
                "wait": (answered - started) * 1000.0,
                "receive": (finished - answered) * 1000.0,
            },
            "_resourceType": sent["type"].as_str().unwrap_or("Other").to_lowercase(),
        }));
    }
    json!({
        "log": {
            "version": "1.2",
            "creator": { "name": "stampede-testkit", "version": "1" },
            "pages": [],
            "entries": entries,
        }
    })
}

/// DevTools' header object (`{"Name": "value"}`) as HAR's list.
fn name_values(headers: &Value) -> Value {
    let list: Vec<Value> = headers
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(name, value)| json!({ "name": name, "value": value }))
                .collect()
        })
        .unwrap_or_default();
    Value::Array(list)
}

fn header(headers: &Value, wanted: &str) -> Option<String> {
    let map = headers.as_object()?;
    map.iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(wanted))
        .and_then(|(_, value)| value.as_str().map(str::to_string))
}

/// The URL's query as HAR's name/value list (left encoded).
fn query_string(url: &str) -> Value {
    let query = url
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or(""));
    let list: Vec<Value> = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            json!({ "name": name, "value": value })
        })
        .collect();
    Value::Array(list)
}

/// Seconds since the epoch as RFC 3339 UTC with milliseconds.
fn rfc3339(seconds: f64) -> String {
    let millis = (seconds * 1000.0).round() as i64;
    let (days, in_day) = (millis.div_euclid(86_400_000), millis.rem_euclid(86_400_000));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc_3339_utc() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00.000Z");
        // date -u -d @1796396400.25 → 2026-12-04 15:00:00.25 UTC
        assert_eq!(rfc3339(1_796_396_400.25), "2026-12-04T15:00:00.250Z");
        assert_eq!(rfc3339(951_782_400.0), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn an_answered_request_becomes_an_entry_and_an_unanswered_one_does_not() {
        let events = vec![
            json!({"method": "Network.requestWillBeSent", "params": {"requestId": "1", "timestamp": 10.0, "wallTime": 1_796_396_400.0, "type": "Document",
                "request": {"method": "GET", "url": "http://127.0.0.1:9/a?x=1", "headers": {"Accept": "*/*"}}}}),
            json!({"method": "Network.requestWillBeSent", "params": {"requestId": "2", "timestamp": 10.1, "wallTime": 1_796_396_400.1, "type": "Image",
                "request": {"method": "GET", "url": "http://127.0.0.1:9/lost.png", "headers": {}}}}),
            json!({"method": "Network.responseReceived", "params": {"requestId": "1", "timestamp": 10.02,
                "response": {"status": 200, "statusText": "OK", "protocol": "http/1.1", "headers": {"Content-Length": "5"}, "mimeType": "text/html", "encodedDataLength": 40}}}),
            json!({"method": "Network.loadingFinished", "params": {"requestId": "1", "timestamp": 10.05}}),
        ];
        let har = har_from_network_events(&events);
        let entries = har["log"]["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 1);
        let entry = &entries[0];
        assert_eq!(entry["request"]["url"], "http://127.0.0.1:9/a?x=1");
        assert_eq!(entry["request"]["queryString"][0]["name"], "x");
        assert_eq!(entry["request"]["headers"][0]["name"], "Accept");
        assert_eq!(entry["response"]["status"], 200);
        assert_eq!(entry["startedDateTime"], "2026-12-04T15:00:00.000Z");
        assert_eq!(entry["_resourceType"], "document");
        assert!((entry["time"].as_f64().unwrap() - 50.0).abs() < 1e-6);
    }
}
