//! The throughput ceiling of a sweep and the evidence it rests on: the
//! plateau of steps past the knee whose goodput stays flat. One step cannot
//! tell a ceiling from a point on the way up, so it yields only a lower
//! bound ("at least"). The knee itself and the classes live in `sweep`.

use serde::{Deserialize, Serialize};

/// The goodputs a throughput ceiling rests on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GoodputRange {
    /// The lowest goodput on the plateau, req/s.
    pub low: f64,
    /// The highest goodput on the plateau, req/s.
    pub high: f64,
    /// How many steps lie on the plateau (at least two).
    pub steps: usize,
}

/// What the steps from the knee on say about the throughput ceiling.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plateau {
    pub ceiling: Option<f64>,
    pub range: Option<GoodputRange>,
    pub at_least: Option<f64>,
}

/// A ceiling needs two steps whose goodput stays within `flat_pct` of the
/// highest past the knee: one step cannot tell a ceiling from a point on
/// the way up ("≈ 126439 within 126439–126439"). `usable` are the
/// goodputs from the knee on, overloaded steps left out.
pub(crate) fn plateau(usable: &[f64], flat_pct: f64) -> Plateau {
    let high = usable.iter().copied().fold(f64::MIN, f64::max);
    let flat: Vec<f64> = usable
        .iter()
        .copied()
        .filter(|x| *x >= high * (1.0 - flat_pct / 100.0))
        .collect();
    if flat.len() < 2 {
        return Plateau {
            ceiling: None,
            range: None,
            at_least: (!usable.is_empty()).then_some(high),
        };
    }
    let low = flat.iter().copied().fold(f64::MAX, f64::min);
    Plateau {
        ceiling: Some(flat.iter().sum::<f64>() / flat.len() as f64),
        range: Some(GoodputRange {
            low,
            high,
            steps: flat.len(),
        }),
        at_least: None,
    }
}
