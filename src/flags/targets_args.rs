//! `--targets FILE`: reads the file and its body files, and turns its blocks
//! into the plan's mix (the parsing rules are in stampede-plan).

use anyhow::Context;
use stampede_plan::{parse_targets, Header, MixEntry, RequestSpec};
use std::path::Path;

/// Reads `path` into a mix. `common` headers (-H, -T, auth, cookies) apply to
/// every request; a block's own header of the same name wins.
pub fn read_mix(path: &Path, common: &[Header], http10: bool) -> anyhow::Result<Vec<MixEntry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading --targets {}", path.display()))?;
    let blocks = parse_targets(&text, &path.display().to_string())?;
    let base = path.parent().unwrap_or(Path::new("."));
    blocks
        .into_iter()
        .map(|block| {
            let body = match &block.body_file {
                Some(file) => {
                    let full = base.join(file);
                    std::fs::read(&full).with_context(|| {
                        format!(
                            "{}:{}: reading body file {}",
                            path.display(),
                            block.line,
                            full.display()
                        )
                    })?
                }
                None => Vec::new(),
            };
            let headers = with_common_headers(common, block.headers);
            Ok(MixEntry {
                target: block.target,
                request: RequestSpec {
                    method: block.method,
                    headers,
                    body,
                    http10,
                },
                weight: block.weight,
            })
        })
        .collect()
}

/// `common` headers (-H, -T, auth, cookies) followed by a request's `own`
/// (a `--targets` block's, a scenario step's); an own header of the same
/// name replaces the common one.
pub fn with_common_headers(common: &[Header], own: Vec<Header>) -> Vec<Header> {
    let mut headers: Vec<Header> = common
        .iter()
        .filter(|h| !own.iter().any(|o| o.name.eq_ignore_ascii_case(&h.name)))
        .cloned()
        .collect();
    headers.extend(own);
    headers
}
