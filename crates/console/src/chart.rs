//! Charts drawn on the server as SVG (no script, nothing downloaded): stacked bars of findings per
//! day by severity, lines of values per day, and a value over time as steps (a jackpot's captive
//! value), each with a text equivalent for screen readers.

use maud::{Markup, html};

/// One bar: its label (a date) and its counts per series.
pub struct Bar {
    pub label: String,
    pub counts: Vec<u64>,
}

/// A series: its name and colour (high-contrast, distinguishable in grey too).
pub struct Series {
    pub name: String,
    pub colour: &'static str,
}

pub const SEVERITY_COLOURS: [&str; 5] = ["#6b7280", "#2563eb", "#ca8a04", "#ea580c", "#b91c1c"];

/// A stacked bar chart, `title` read out by screen readers, the counts also in a table.
pub fn stacked_bars(title: &str, series: &[Series], bars: &[Bar]) -> Markup {
    const W: u64 = 640;
    const H: u64 = 220;
    const TOP: u64 = 10;
    const BOTTOM: u64 = 40;
    const LEFT: u64 = 40;
    let max = bars
        .iter()
        .map(|b| b.counts.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let plot_h = H - TOP - BOTTOM;
    let n = bars.len().max(1) as u64;
    let slot = (W - LEFT) / n;
    let bar_w = (slot * 3 / 5).max(2);
    // (x, y, height, colour, tooltip) of every rectangle, stacked from the axis up.
    let mut rects = Vec::new();
    for (i, b) in bars.iter().enumerate() {
        let x = LEFT + i as u64 * slot + (slot - bar_w) / 2;
        let mut y = TOP + plot_h;
        for (s, &c) in b.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let h = (c * plot_h / max).max(1);
            let top = y.saturating_sub(h);
            let (name, colour) = series
                .get(s)
                .map(|s| (s.name.as_str(), s.colour))
                .unwrap_or(("", "#000000"));
            rects.push((x, top, y - top, colour, format!("{}: {name} {c}", b.label)));
            y = top;
        }
    }
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (W) " " (H)} width="100%"
            role="img" aria-label=(title) class="chart" {
            title { (title) }
            line x1=(LEFT) y1=(TOP + plot_h) x2=(W) y2=(TOP + plot_h) stroke="#111827" {}
            text x=(LEFT - 6) y=(TOP + 4) text-anchor="end" font-size="11" { (max) }
            text x=(LEFT - 6) y=(TOP + plot_h) text-anchor="end" font-size="11" { "0" }
            @for (x, y, h, colour, tip) in &rects {
                rect x=(x) y=(y) width=(bar_w) height=(h) fill=(colour) { title { (tip) } }
            }
            @for (i, b) in bars.iter().enumerate() {
                text x=(LEFT + i as u64 * slot + slot / 2) y=(H - BOTTOM + 16) text-anchor="middle" font-size="11" { (b.label) }
            }
        }
    }
}

/// One x position of a line chart: its label and a value per series (none: no point).
pub struct Point {
    pub label: String,
    pub values: Vec<Option<i64>>,
}

/// A line chart of signed values (e.g. basis points) with a zero line, `fmt` labelling the axis
/// and the tooltips; the figures are also in a table beside it.
pub fn lines(
    title: &str,
    series: &[Series],
    points: &[Point],
    fmt: &dyn Fn(i64) -> String,
) -> Markup {
    const W: i64 = 640;
    const H: i64 = 220;
    const TOP: i64 = 10;
    const BOTTOM: i64 = 40;
    const LEFT: i64 = 60;
    let all = points
        .iter()
        .flat_map(|p| p.values.iter().flatten().copied());
    let (lo, hi) = all.fold((0i64, 0i64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let hi = if hi == lo { lo.saturating_add(1) } else { hi };
    let plot_h = H - TOP - BOTTOM;
    let span = i128::from(hi) - i128::from(lo);
    let y = |v: i64| {
        TOP + plot_h - ((i128::from(v) - i128::from(lo)) * i128::from(plot_h) / span) as i64
    };
    let n = points.len().max(1) as i64;
    let slot = (W - LEFT) / n;
    let x = |i: usize| LEFT + i as i64 * slot + slot / 2;
    // Each series' points joined where consecutive days have a value.
    let mut paths = Vec::new();
    for (s, ser) in series.iter().enumerate() {
        let mut d = String::new();
        let mut pen_down = false;
        for (i, p) in points.iter().enumerate() {
            match p.values.get(s).copied().flatten() {
                Some(v) => {
                    d.push_str(&format!(
                        "{}{} {} ",
                        if pen_down { "L" } else { "M" },
                        x(i),
                        y(v)
                    ));
                    pen_down = true;
                }
                None => pen_down = false,
            }
        }
        paths.push((d, ser.colour));
    }
    let label_every = (points.len() / 10).max(1);
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (W) " " (H)} width="100%"
            role="img" aria-label=(title) class="chart" {
            title { (title) }
            line x1=(LEFT) y1=(y(0)) x2=(W) y2=(y(0)) stroke="#111827" {}
            text x=(LEFT - 6) y=(TOP + 4) text-anchor="end" font-size="11" { (fmt(hi)) }
            text x=(LEFT - 6) y=(TOP + plot_h) text-anchor="end" font-size="11" { (fmt(lo)) }
            @for (d, colour) in &paths {
                @if !d.is_empty() { path d=(d.trim_end()) fill="none" stroke=(colour) stroke-width="2" {} }
            }
            @for (s, ser) in series.iter().enumerate() {
                @for (i, p) in points.iter().enumerate() {
                    @if let Some(v) = p.values.get(s).copied().flatten() {
                        circle cx=(x(i)) cy=(y(v)) r="3" fill=(ser.colour) { title { (p.label) ": " (ser.name) " " (fmt(v)) } }
                    }
                }
            }
            @for (i, p) in points.iter().enumerate() {
                @if i % label_every == 0 {
                    text x=(x(i)) y=(H - BOTTOM + 16) text-anchor="middle" font-size="11" { (p.label) }
                }
            }
        }
    }
}

/// A value over time drawn as steps (it holds until the next point), x in proportion to the
/// time, y from the lower of 0 and the smallest value to the largest; `fmt_y` labels the axis
/// and the tooltips, `fmt_x` the first and last times. Points must be in time order.
pub fn steps(
    title: &str,
    colour: &str,
    points: &[(i64, i64)],
    fmt_y: &dyn Fn(i64) -> String,
    fmt_x: &dyn Fn(i64) -> String,
) -> Markup {
    const W: i64 = 640;
    const H: i64 = 220;
    const TOP: i64 = 10;
    const BOTTOM: i64 = 40;
    const LEFT: i64 = 90;
    const RIGHT: i64 = 10;
    let lo = points.iter().map(|p| p.1).min().unwrap_or(0).min(0);
    let hi = points.iter().map(|p| p.1).max().unwrap_or(0);
    let hi = if hi <= lo { lo.saturating_add(1) } else { hi };
    let (t0, t1) = match (points.first(), points.last()) {
        (Some(a), Some(b)) => (a.0, b.0),
        _ => (0, 0),
    };
    let t1 = if t1 <= t0 { t0.saturating_add(1) } else { t1 };
    let plot_h = H - TOP - BOTTOM;
    let plot_w = W - LEFT - RIGHT;
    let y = |v: i64| {
        TOP + plot_h
            - ((i128::from(v) - i128::from(lo)) * i128::from(plot_h)
                / (i128::from(hi) - i128::from(lo))) as i64
    };
    let x = |t: i64| {
        LEFT + ((i128::from(t) - i128::from(t0)) * i128::from(plot_w)
            / (i128::from(t1) - i128::from(t0))) as i64
    };
    let mut d = String::new();
    for (i, (t, v)) in points.iter().enumerate() {
        if i == 0 {
            d.push_str(&format!("M{} {} ", x(*t), y(*v)));
        } else {
            d.push_str(&format!("H{} V{} ", x(*t), y(*v)));
        }
    }
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (W) " " (H)} width="100%"
            role="img" aria-label=(title) class="chart" {
            title { (title) }
            line x1=(LEFT) y1=(y(0)) x2=(W - RIGHT) y2=(y(0)) stroke="#111827" {}
            text x=(LEFT - 6) y=(TOP + 4) text-anchor="end" font-size="11" { (fmt_y(hi)) }
            text x=(LEFT - 6) y=(TOP + plot_h) text-anchor="end" font-size="11" { (fmt_y(lo)) }
            @if !d.is_empty() { path d=(d.trim_end()) fill="none" stroke=(colour) stroke-width="2" {} }
            @for (t, v) in points {
                circle cx=(x(*t)) cy=(y(*v)) r="2" fill=(colour) { title { (fmt_x(*t)) ": " (fmt_y(*v)) } }
            }
            @if let (Some(a), Some(b)) = (points.first(), points.last()) {
                text x=(LEFT) y=(H - BOTTOM + 16) text-anchor="start" font-size="11" { (fmt_x(a.0)) }
                @if b.0 > a.0 {
                    text x=(W - RIGHT) y=(H - BOTTOM + 16) text-anchor="end" font-size="11" { (fmt_x(b.0)) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_as_tall_as_their_counts() {
        let series = vec![
            Series {
                name: "low".into(),
                colour: "#111111",
            },
            Series {
                name: "high".into(),
                colour: "#222222",
            },
        ];
        let bars = vec![
            Bar {
                label: "d1".into(),
                counts: vec![1, 3],
            },
            Bar {
                label: "d2".into(),
                counts: vec![0, 2],
            },
        ];
        let svg = stacked_bars("Findings <by day>", &series, &bars).into_string();
        // The tallest bar (4) fills the plot (170 px): 1 -> 42 px, 3 -> 127 px; 2 -> 85 px.
        assert!(svg.contains(r##"height="42" fill="#111111""##), "{svg}");
        assert!(svg.contains(r##"height="127" fill="#222222""##), "{svg}");
        assert!(svg.contains(r##"height="85" fill="#222222""##), "{svg}");
        assert_eq!(svg.matches("<rect").count(), 3, "no bar for a zero count");
        assert!(svg.contains("Findings &lt;by day&gt;"), "escaped: {svg}");
        assert!(svg.contains(">d2: high 2<"));
    }

    #[test]
    fn line_points_sit_at_their_values() {
        let series = vec![Series {
            name: "hold".into(),
            colour: "#111111",
        }];
        let points = vec![
            Point {
                label: "a".into(),
                values: vec![Some(-100)],
            },
            Point {
                label: "b".into(),
                values: vec![None],
            },
            Point {
                label: "c".into(),
                values: vec![Some(300)],
            },
        ];
        let svg = lines("Hold", &series, &points, &|v| format!("{v}bp")).into_string();
        // Plot 170 px high from -100 (y 180) to 300 (y 10); zero is at y 138.
        assert!(
            svg.contains(r#"cy="180""#) && svg.contains(r#"cy="10""#),
            "{svg}"
        );
        assert!(svg.contains(r#"y1="138""#), "{svg}");
        assert_eq!(
            svg.matches("<circle").count(),
            2,
            "no point for a day without rounds"
        );
        // The gap breaks the line: two one-point moves, no line segment across it.
        assert!(!svg.contains(" L"), "{svg}");
        assert!(svg.contains(">c: hold 300bp<"), "{svg}");
    }

    #[test]
    fn steps_hold_each_value_until_the_next_time() {
        let pts = [(1_000, 100), (1_500, 300), (3_000, 0)];
        let svg = steps("Captive", "#123456", &pts, &|v| format!("{v}c"), &|t| {
            format!("t{t}")
        })
        .into_string();
        // x: 90 + (t - 1000) * 540 / 2000; y: 180 - v * 170 / 300.
        assert!(
            svg.contains(r#"d="M90 124 H225 V10 H630 V180""#),
            "a step to each new value: {svg}"
        );
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains(">t1500: 300c<"), "{svg}");
        assert!(svg.contains(">t1000<") && svg.contains(">t3000<"), "{svg}");
        // No points: an empty plot, no path.
        let svg = steps("Captive", "#123456", &[], &|v| v.to_string(), &|t| {
            t.to_string()
        })
        .into_string();
        assert!(!svg.contains("<path"), "{svg}");
    }
}
