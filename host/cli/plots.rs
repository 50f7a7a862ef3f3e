//! Small SVG charts of `aceapex reproduce`'s results (line charts and grouped bars), written
//! by hand: a few hundred bytes of markup each, no plotting crate.

use std::fmt::Write as _;

const W: f64 = 720.0;
const H: f64 = 420.0;
/// Margins: left, right, top, bottom.
const ML: f64 = 70.0;
const MR: f64 = 200.0;
const MT: f64 = 40.0;
const MB: f64 = 50.0;

/// Series colours, cycled.
const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// `s` with the characters XML gives a meaning escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn header(title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n<text x=\"{}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n",
        W / 2.0,
        esc(title)
    )
}

/// Axes with `ticks` labelled values on each: (value, label).
fn axes(s: &mut String, xlabel: &str, ylabel: &str, xt: &[(f64, String)], yt: &[(f64, String)]) {
    let (x0, x1, y0, y1) = (ML, W - MR, H - MB, MT);
    let _ = writeln!(
        s,
        "<path d=\"M{x0},{y1} L{x0},{y0} L{x1},{y0}\" stroke=\"black\" fill=\"none\"/>"
    );
    for (x, l) in xt {
        let _ = writeln!(
            s,
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            y0 + 16.0,
            esc(l)
        );
    }
    for (y, l) in yt {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><path d=\"M{x0},{y:.1} L{x1},{y:.1}\" stroke=\"#ddd\"/>",
            x0 - 6.0,
            y + 4.0,
            esc(l)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        (x0 + x1) / 2.0,
        H - 12.0,
        esc(xlabel)
    );
    let _ = writeln!(
        s,
        "<text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">{}</text>",
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        esc(ylabel)
    );
}

fn legend(s: &mut String, names: &[String]) {
    for (i, n) in names.iter().enumerate() {
        let y = MT + 8.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            W - MR + 14.0,
            y - 10.0,
            COLOURS[i % COLOURS.len()],
            W - MR + 32.0,
            y,
            esc(n)
        );
    }
}

/// The range of `v` padded to a nonzero width.
fn range(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for x in v {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-9 {
        return (lo - 0.5, hi + 0.5);
    }
    (lo, hi)
}

fn fmt_tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// A line chart of `series` (name, points); `log_x` draws x on a log2 scale.
pub fn line_chart(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> String {
    let tx = |x: f64| if log_x { x.max(1e-9).log2() } else { x };
    let pts = || series.iter().flat_map(|(_, p)| p.iter());
    let (xl, xh) = range(pts().map(|&(x, _)| tx(x)));
    let (yl, yh) = range(pts().map(|&(_, y)| y));
    let px = |x: f64| ML + (tx(x) - xl) / (xh - xl) * (W - MR - ML);
    let py = |y: f64| H - MB - (y - yl) / (yh - yl) * (H - MB - MT);
    let mut s = header(title);
    let mut xs: Vec<f64> = pts().map(|&(x, _)| x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let step = xs.len().div_ceil(10).max(1);
    let xt: Vec<(f64, String)> = xs
        .iter()
        .step_by(step)
        .map(|&x| (px(x), fmt_tick(x)))
        .collect();
    let yt: Vec<(f64, String)> = (0..=4)
        .map(|i| {
            let y = yl + (yh - yl) * i as f64 / 4.0;
            (py(y), fmt_tick((y * 1000.0).round() / 1000.0))
        })
        .collect();
    axes(&mut s, xlabel, ylabel, &xt, &yt);
    for (i, (_, p)) in series.iter().enumerate() {
        let d: Vec<String> = p
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>",
            d.join(" "),
            COLOURS[i % COLOURS.len()]
        );
    }
    let names: Vec<String> = series.iter().map(|(n, _)| n.clone()).collect();
    legend(&mut s, &names);
    s + "</svg>\n"
}

/// Grouped bars: per group (name, bars of (series name, value)); the series of the first
/// group name the legend.
pub fn bar_chart(title: &str, ylabel: &str, groups: &[(String, Vec<(String, f64)>)]) -> String {
    let (_, yh) = range(groups.iter().flat_map(|(_, b)| b.iter().map(|&(_, v)| v)));
    let yh = yh.max(1e-9);
    let py = |y: f64| H - MB - y / yh * (H - MB - MT);
    let mut s = header(title);
    let gw = (W - MR - ML) / groups.len().max(1) as f64;
    let xt: Vec<(f64, String)> = groups
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (ML + gw * (i as f64 + 0.5), n.clone()))
        .collect();
    let yt: Vec<(f64, String)> = (0..=4)
        .map(|i| {
            let y = yh * i as f64 / 4.0;
            (py(y), fmt_tick((y * 100.0).round() / 100.0))
        })
        .collect();
    axes(&mut s, "", ylabel, &xt, &yt);
    for (gi, (_, bars)) in groups.iter().enumerate() {
        let bw = gw * 0.8 / bars.len().max(1) as f64;
        for (bi, &(_, v)) in bars.iter().enumerate() {
            let x = ML + gw * gi as f64 + gw * 0.1 + bw * bi as f64;
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{v}</title></rect>",
                py(v),
                bw,
                (H - MB - py(v)).max(0.0),
                COLOURS[bi % COLOURS.len()]
            );
        }
    }
    let names: Vec<String> = groups
        .first()
        .map(|(_, b)| b.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    legend(&mut s, &names);
    s + "</svg>\n"
}
