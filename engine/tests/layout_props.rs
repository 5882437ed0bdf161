//! Property tests of the layout tree: random sequences of splits, removals and ratio changes
//! must keep every invariant of `berth_engine::layout` after every step.
//!
//! Every test here is named `layout_*` so that `cargo test layout` runs them with the unit
//! tests of the module.

use berth_engine::ids::PaneId;
use berth_engine::layout::{
    CellRect, CellSize, FocusDir, Layout, LayoutError, Side, SplitDir, MAX_RATIO, MIN_RATIO,
};
use proptest::prelude::*;

/// The most panes a generated layout holds.
const MAX_PANES: usize = 12;

/// One generated operation; indices pick a pane modulo the current count.
#[derive(Debug, Clone)]
enum Op {
    /// Split the pane at this index in this direction.
    Split(usize, SplitDir),
    /// Remove the pane at this index.
    Remove(usize),
    /// Set the ratio at a path (which may not lead to a split).
    SetRatio(Vec<Side>, f64),
}

/// Either split direction.
fn dir() -> impl Strategy<Value = SplitDir> {
    prop_oneof![Just(SplitDir::Right), Just(SplitDir::Down)]
}

/// Either step of a path.
fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::First), Just(Side::Second)]
}

/// Ratios in and out of range, with the non-finite ones that must be refused.
fn ratio() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..=1.0f64,
        2 => -2.0..3.0f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(0.0),
        1 => Just(1.0),
    ]
}

/// One operation, splits being the most common so that layouts grow.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), dir()).prop_map(|(i, d)| Op::Split(i, d)),
        2 => any::<usize>().prop_map(Op::Remove),
        2 => (prop::collection::vec(side(), 0..5), ratio()).prop_map(|(p, r)| Op::SetRatio(p, r)),
    ]
}

/// A tab size from 1x1 to 500x200.
fn size() -> impl Strategy<Value = CellSize> {
    (1..=500u16, 1..=200u16).prop_map(|(cols, rows)| CellSize { cols, rows })
}

/// Every ratio of the tree, depth-first.
fn ratios(layout: &Layout, out: &mut Vec<f64>) {
    if let Layout::Split { ratio, first, second, .. } = layout {
        out.push(*ratio);
        ratios(first, out);
        ratios(second, out);
    }
}

/// The number of cells a rectangle covers.
fn area(r: &CellRect) -> u64 {
    u64::from(r.cols) * u64::from(r.rows)
}

/// Whether two rectangles share a cell.
fn overlaps(a: &CellRect, b: &CellRect) -> bool {
    let (a0, a1) = (u32::from(a.col), u32::from(a.col) + u32::from(a.cols));
    let (b0, b1) = (u32::from(b.col), u32::from(b.col) + u32::from(b.cols));
    let (c0, c1) = (u32::from(a.row), u32::from(a.row) + u32::from(a.rows));
    let (d0, d1) = (u32::from(b.row), u32::from(b.row) + u32::from(b.rows));
    a0 < b1 && b0 < a1 && c0 < d1 && d0 < c1
}

/// Whether a rectangle lies within a tab of `size`.
fn inside(r: &CellRect, size: CellSize) -> bool {
    u32::from(r.col) + u32::from(r.cols) <= u32::from(size.cols)
        && u32::from(r.row) + u32::from(r.rows) <= u32::from(size.rows)
}

/// Checks the structural invariants and that the panes are exactly `expected`.
fn check_tree(layout: &Layout, expected: &[PaneId]) -> Result<(), TestCaseError> {
    let mut panes = layout.panes();
    let mut want = expected.to_vec();
    panes.sort();
    want.sort();
    prop_assert_eq!(&panes, &want, "each pane exactly once");
    prop_assert_eq!(layout.pane_count(), expected.len());
    prop_assert_eq!(layout.validate(&layout.panes()), Ok(()));
    let mut rs = Vec::new();
    ratios(layout, &mut rs);
    prop_assert_eq!(rs.len() + 1, expected.len());
    for r in rs {
        prop_assert!(r.is_finite() && (MIN_RATIO..=MAX_RATIO).contains(&r), "ratio {}", r);
    }
    Ok(())
}

/// Checks the geometry at `size`: always one rect of at least 1x1 per pane, in `panes()`
/// order; an exact tiling when the tab is large enough; sane neighbours and mouse hits.
fn check_geometry(layout: &Layout, size: CellSize) -> Result<(), TestCaseError> {
    let panes = layout.panes();
    let rects = layout.rects(size);
    let dividers = layout.dividers(size);
    let order: Vec<PaneId> = rects.iter().map(|(p, _)| p.clone()).collect();
    prop_assert_eq!(&order, &panes);
    for (_, r) in &rects {
        prop_assert!(r.cols >= 1 && r.rows >= 1);
    }
    let n = panes.len();
    let big = usize::from(size.cols) + 1 >= 2 * n && usize::from(size.rows) + 1 >= 2 * n;
    if big {
        prop_assert_eq!(dividers.len(), n - 1);
        let all: Vec<CellRect> =
            rects.iter().map(|(_, r)| *r).chain(dividers.iter().map(|d| d.rect)).collect();
        for (i, a) in all.iter().enumerate() {
            prop_assert!(inside(a, size), "{:?} outside {:?}", a, size);
            for b in &all[i + 1..] {
                prop_assert!(!overlaps(a, b), "{:?} overlaps {:?}", a, b);
            }
        }
        let total: u64 = all.iter().map(area).sum();
        prop_assert_eq!(total, u64::from(size.cols) * u64::from(size.rows), "exact tiling");
        for divider in &dividers {
            prop_assert!(layout.ratio_at(&divider.path).is_some());
        }
        for (pane, r) in &rects {
            prop_assert_eq!(layout.pane_at(size, r.col, r.row), Some(pane.clone()));
            let (last_col, last_row) = (r.col + r.cols - 1, r.row + r.rows - 1);
            prop_assert_eq!(layout.pane_at(size, last_col, last_row), Some(pane.clone()));
        }
        for d in &dividers {
            prop_assert_eq!(layout.pane_at(size, d.rect.col, d.rect.row), None);
        }
    }
    for (from, f) in &rects {
        for dir in [FocusDir::Left, FocusDir::Right, FocusDir::Up, FocusDir::Down] {
            let Some(to) = layout.neighbour(from, dir, size) else {
                continue;
            };
            prop_assert_ne!(&to, from);
            let t = rects.iter().find(|(p, _)| *p == to).map(|(_, r)| *r);
            // Touching across a divider counts as sharing the perpendicular axis.
            let t = t.ok_or_else(|| TestCaseError::fail("neighbour is not a pane"))?;
            let (fl, fr) = (u32::from(f.col), u32::from(f.col) + u32::from(f.cols));
            let (ft, fb) = (u32::from(f.row), u32::from(f.row) + u32::from(f.rows));
            let (tl, tr) = (u32::from(t.col), u32::from(t.col) + u32::from(t.cols));
            let (tt, tb) = (u32::from(t.row), u32::from(t.row) + u32::from(t.rows));
            // The neighbour lies wholly on that side and shares part of the perpendicular axis;
            // in a tiled tab it is adjacent, just across one divider.
            let (gap, shares) = match dir {
                FocusDir::Right => (tl.checked_sub(fr), tt <= fb && ft <= tb),
                FocusDir::Left => (fl.checked_sub(tr), tt <= fb && ft <= tb),
                FocusDir::Down => (tt.checked_sub(fb), tl <= fr && fl <= tr),
                FocusDir::Up => (ft.checked_sub(tb), tl <= fr && fl <= tr),
            };
            prop_assert!(gap.is_some() && shares, "{:?} {:?} -> {:?}", f, dir, t);
            if big {
                prop_assert_eq!(gap, Some(1), "{:?} {:?} -> {:?} is not adjacent", f, dir, t);
            }
        }
    }
    Ok(())
}

/// A fresh id for the `i`-th generated pane.
fn pane(i: usize) -> PaneId {
    PaneId::parse(&format!("pane_{i}")).expect("generated names are path-safe")
}

proptest! {
    #[test]
    fn layout_keeps_every_invariant_under_random_operations(
        ops in prop::collection::vec(op(), 0..40),
        sizes in prop::collection::vec(size(), 40),
    ) {
        let mut layout = Layout::single(pane(0));
        let mut live = vec![pane(0)];
        let mut next = 1;
        for (op, size) in ops.into_iter().zip(sizes) {
            match op {
                Op::Split(i, dir) => {
                    let target = live[i % live.len()].clone();
                    if live.len() < MAX_PANES {
                        layout.split(&target, pane(next), dir)?;
                        live.push(pane(next));
                        next += 1;
                    }
                    // Splitting with a pane that is already there is refused and changes nothing.
                    let before = layout.clone();
                    prop_assert_eq!(
                        layout.split(&target, live[0].clone(), dir),
                        Err(LayoutError::DuplicatePane(live[0].clone()))
                    );
                    prop_assert_eq!(&layout, &before);
                }
                Op::Remove(i) => {
                    let victim = live[i % live.len()].clone();
                    let before = layout.clone();
                    let more = layout.remove(&victim)?;
                    prop_assert_eq!(more, live.len() > 1);
                    if more {
                        live.retain(|p| *p != victim);
                    } else {
                        prop_assert_eq!(&layout, &before);
                    }
                }
                Op::SetRatio(path, ratio) => {
                    let before = layout.clone();
                    let result = layout.set_ratio(&path, ratio);
                    if !ratio.is_finite() {
                        prop_assert_eq!(&result, &Err(LayoutError::NonFiniteRatio));
                    } else if before.ratio_at(&path).is_none() {
                        prop_assert_eq!(&result, &Err(LayoutError::BadPath));
                    } else {
                        prop_assert_eq!(&result, &Ok(()));
                        prop_assert_eq!(layout.ratio_at(&path), Some(ratio.clamp(MIN_RATIO, MAX_RATIO)));
                    }
                    if result.is_err() {
                        prop_assert_eq!(&layout, &before);
                    }
                }
            }
            check_tree(&layout, &live)?;
            check_geometry(&layout, size)?;
        }
    }

    #[test]
    fn layout_geometry_never_panics_at_tiny_sizes(
        ops in prop::collection::vec((any::<usize>(), dir()), 0..MAX_PANES),
        cols in 0..6u16,
        rows in 0..6u16,
    ) {
        let mut layout = Layout::single(pane(0));
        let mut live = vec![pane(0)];
        for (i, dir) in ops {
            let target = live[i % live.len()].clone();
            layout.split(&target, pane(live.len()), dir)?;
            live.push(pane(live.len()));
        }
        let size = CellSize { cols, rows };
        prop_assert_eq!(layout.rects(size).len(), live.len());
        let _ = layout.dividers(size);
        for p in &live {
            for dir in [FocusDir::Left, FocusDir::Right, FocusDir::Up, FocusDir::Down] {
                prop_assert_ne!(layout.neighbour(p, dir, size), Some(p.clone()));
            }
        }
        for col in 0..cols {
            for row in 0..rows {
                let _ = layout.pane_at(size, col, row);
            }
        }
        if cols > 0 && rows > 0 {
            check_geometry(&layout, size)?;
        }
    }

    #[test]
    fn layout_same_direction_splits_share_equally(
        targets in prop::collection::vec(any::<usize>(), 1..MAX_PANES),
        dir in dir(),
        len in 100..=500u16,
    ) {
        let mut layout = Layout::single(pane(0));
        let mut live = vec![pane(0)];
        for i in targets {
            let target = live[i % live.len()].clone();
            layout.split(&target, pane(live.len()), dir)?;
            live.push(pane(live.len()));
        }
        // Every split is one run: each ratio is its share of panes, whatever the tree's shape.
        fn shares(layout: &Layout) -> Result<usize, TestCaseError> {
            match layout {
                Layout::Pane(_) => Ok(1),
                Layout::Split { ratio, first, second, .. } => {
                    let (a, b) = (shares(first)?, shares(second)?);
                    prop_assert!((ratio - a as f64 / (a + b) as f64).abs() < 1e-12);
                    Ok(a + b)
                }
            }
        }
        shares(&layout)?;
        // On screen the panes are equal to within the rounding of each level of the tree.
        let size = match dir {
            SplitDir::Right => CellSize { cols: len, rows: 10 },
            SplitDir::Down => CellSize { cols: 10, rows: len },
        };
        let lens: Vec<u16> = layout
            .rects(size)
            .into_iter()
            .map(|(_, r)| if dir == SplitDir::Right { r.cols } else { r.rows })
            .collect();
        let n = live.len() as f64;
        let ideal = (f64::from(len) - (n - 1.0)) / n;
        for l in &lens {
            prop_assert!((f64::from(*l) - ideal).abs() <= n.log2().ceil() + 1.0, "{:?} vs {}", lens, ideal);
        }
    }

    #[test]
    fn layout_removing_all_but_one_leaves_a_single_pane(
        splits in prop::collection::vec((any::<usize>(), dir()), 0..MAX_PANES),
        order in any::<u64>(),
    ) {
        let mut layout = Layout::single(pane(0));
        let mut live = vec![pane(0)];
        for (i, dir) in splits {
            let target = live[i % live.len()].clone();
            layout.split(&target, pane(live.len()), dir)?;
            live.push(pane(live.len()));
        }
        // Remove in a pseudo-random order drawn from `order`.
        let mut seed = order;
        while live.len() > 1 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let victim = live.remove((seed >> 33) as usize % live.len());
            prop_assert_eq!(layout.remove(&victim), Ok(true));
            check_tree(&layout, &live)?;
        }
        prop_assert_eq!(&layout, &Layout::Pane(live[0].clone()));
        prop_assert_eq!(layout.remove(&live[0]), Ok(false));
    }
}

/// Repeated same-direction splits give thirds and quarters on screen, as equal as the
/// `round(avail * ratio)` rule at each level of the tree allows.
#[test]
fn layout_thirds_and_quarters_are_equal_on_screen() {
    let cases: &[(usize, u16, &[u16])] = &[
        (3, 80, &[26, 26, 26]),
        (3, 120, &[40, 39, 39]),
        // 78 * 1/4 = 19.5 rounds up and 37 * 1/2 = 18.5 rounds up, so the ends differ by two.
        (4, 79, &[20, 19, 19, 18]),
        (4, 80, &[20, 19, 19, 19]),
    ];
    for (n, cols, expected) in cases {
        let mut layout = Layout::single(pane(0));
        for i in 1..*n {
            layout.split(&pane(i - 1), pane(i), SplitDir::Right).expect("fresh pane");
        }
        let widths: Vec<u16> = layout
            .rects(CellSize { cols: *cols, rows: 24 })
            .into_iter()
            .map(|(_, r)| r.cols)
            .collect();
        assert_eq!(widths, *expected, "{n} panes in {cols} columns");
    }
}
