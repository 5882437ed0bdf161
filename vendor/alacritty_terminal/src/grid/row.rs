//! Defines the Row type which makes up lines in the grid.
//!
//! Berth: a row is either plain (its cells in `inner`) or packed (`packed`: a compact form made by
//! [`GridCell::pack`], for history rows, and the blank rows kept in reserve). A packed row is
//! decoded on the first shared access (kept in its `PackedRow::cells` until the grid's
//! [`Grid::shed_decoded`](super::Grid::shed_decoded)) and turned back into a plain row by any
//! mutable access, so every reader sees exactly the cells a plain row would hold.

use std::borrow::Cow;
use std::cmp::{max, min};
use std::ops::{Index, IndexMut, Range, RangeFrom, RangeFull, RangeTo, RangeToInclusive};
use std::slice;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "serde")]
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::grid::GridCell;
use crate::index::Column;
use crate::term::cell::ResetDiscriminant;

/// Berth: counts the decodes of packed rows made through shared references, and the packed rows
/// made plain by a change, in this process, so that a grid knows when it may hold decoded or
/// plain history rows to pack again (`Grid::shed_decoded`).
pub(crate) static DECODES: AtomicU64 = AtomicU64::new(0);

/// Berth: the compact form of a row (see the module documentation).
pub struct PackedRow<T> {
    /// Number of cells the row holds.
    columns: usize,

    /// The cells' text and style switches, in the cell type's own encoding.
    pub(crate) bytes: Box<[u8]>,

    /// Prototype cells the encoding refers to (styles, the cell that fills the row's end).
    pub(crate) styles: Box<[T]>,

    /// Rebuilds the cells: `columns` of them.
    decode: fn(&PackedRow<T>) -> Vec<T>,

    /// The cells, once a shared access needed them.
    cells: OnceLock<Vec<T>>,
}

impl<T> PackedRow<T> {
    /// A packed row of `columns` cells which `decode` rebuilds from `bytes` and `styles`.
    pub(crate) fn new(
        columns: usize,
        bytes: Box<[u8]>,
        styles: Box<[T]>,
        decode: fn(&PackedRow<T>) -> Vec<T>,
    ) -> Self {
        PackedRow { columns, bytes, styles, decode, cells: OnceLock::new() }
    }

    /// Number of cells the row holds.
    pub(crate) fn columns(&self) -> usize {
        self.columns
    }

    /// The cells, decoded and kept on first use.
    fn cells(&self) -> &[T] {
        self.cells.get_or_init(|| {
            DECODES.fetch_add(1, Ordering::Relaxed);
            (self.decode)(self)
        })
    }

    /// The cells, without keeping a decoded copy.
    fn cells_uncached(&self) -> Cow<'_, [T]>
    where
        T: Clone,
    {
        match self.cells.get() {
            Some(cells) => Cow::Borrowed(cells),
            None => Cow::Owned((self.decode)(self)),
        }
    }

    /// The cells as a vector that the row may own again.
    fn into_cells(mut self: Box<Self>) -> Vec<T> {
        match self.cells.take() {
            Some(cells) => cells,
            None => (self.decode)(&self),
        }
    }
}

impl<T: Clone> Clone for PackedRow<T> {
    fn clone(&self) -> Self {
        PackedRow {
            columns: self.columns,
            bytes: self.bytes.clone(),
            styles: self.styles.clone(),
            decode: self.decode,
            cells: OnceLock::new(),
        }
    }
}

impl<T> std::fmt::Debug for PackedRow<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedRow")
            .field("columns", &self.columns)
            .field("bytes", &self.bytes.len())
            .field("styles", &self.styles.len())
            .finish()
    }
}

/// Decodes a blank packed row: `columns` default cells.
fn decode_blank<T: Default>(packed: &PackedRow<T>) -> Vec<T> {
    let mut cells = Vec::with_capacity(packed.columns);
    cells.resize_with(packed.columns, T::default);
    cells
}

/// A row in the grid.
#[derive(Default, Clone, Debug)]
pub struct Row<T> {
    inner: Vec<T>,

    /// Maximum number of occupied entries.
    ///
    /// This is the upper bound on the number of elements in the row, which have been modified
    /// since the last reset. All cells after this point are guaranteed to be equal.
    pub(crate) occ: usize,

    /// Berth: the row's cells in compact form; `inner` is empty while this is set.
    packed: Option<Box<PackedRow<T>>>,
}

#[cfg(feature = "serde")]
#[derive(Serialize, Deserialize)]
struct RowSerde<T> {
    inner: Vec<T>,
    occ: usize,
}

#[cfg(feature = "serde")]
#[derive(Serialize)]
struct RowSerdeRef<'a, T> {
    inner: &'a [T],
    occ: usize,
}

#[cfg(feature = "serde")]
impl<T: Serialize> Serialize for Row<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RowSerdeRef { inner: self.cells(), occ: self.occ }.serialize(serializer)
    }
}

#[cfg(feature = "serde")]
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Row<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let row = RowSerde::<T>::deserialize(deserializer)?;
        Ok(Row { inner: row.inner, occ: row.occ, packed: None })
    }
}

impl<T: PartialEq> PartialEq for Row<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cells() == other.cells()
    }
}

impl<T: Default> Row<T> {
    /// Create a new terminal row.
    ///
    /// Ideally the `template` should be `Copy` in all performance sensitive scenarios.
    pub fn new(columns: usize) -> Row<T> {
        debug_assert!(columns >= 1);

        let mut inner: Vec<T> = Vec::with_capacity(columns);
        inner.resize_with(columns, T::default);

        Row { inner, occ: 0, packed: None }
    }

    /// Berth: a row of `columns` default cells, packed: it holds no cells until it is used.
    pub fn blank(columns: usize) -> Row<T> {
        debug_assert!(columns >= 1);

        let packed = PackedRow::new(columns, Box::new([]), Box::new([]), decode_blank::<T>);
        Row { inner: Vec::new(), occ: 0, packed: Some(Box::new(packed)) }
    }

    /// Increase the number of columns in the row.
    #[inline]
    pub fn grow(&mut self, columns: usize) {
        if self.len() >= columns {
            return;
        }

        self.unpack();
        self.inner.resize_with(columns, T::default);
    }

    /// Reduce the number of columns in the row.
    ///
    /// This will return all non-empty cells that were removed.
    pub fn shrink(&mut self, columns: usize) -> Option<Vec<T>>
    where
        T: GridCell,
    {
        if self.len() <= columns {
            return None;
        }

        self.unpack();

        // Split off cells for a new row.
        let mut new_row = self.inner.split_off(columns);
        let index = new_row.iter().rposition(|c| !c.is_empty()).map_or(0, |i| i + 1);
        new_row.truncate(index);

        self.occ = min(self.occ, columns);

        if new_row.is_empty() { None } else { Some(new_row) }
    }

    /// Reset all cells in the row to the `template` cell.
    #[inline]
    pub fn reset<D>(&mut self, template: &T)
    where
        T: ResetDiscriminant<D> + GridCell,
        D: PartialEq,
    {
        if self.packed.is_some() {
            self.reset_packed();
        }

        debug_assert!(!self.inner.is_empty());

        // Mark all cells as dirty if template cell changed.
        let len = self.inner.len();
        if self.inner[len - 1].discriminant() != template.discriminant() {
            self.occ = len;
        }

        // Reset every dirty cell in the row.
        for item in &mut self.inner[0..self.occ] {
            item.reset(template);
        }

        self.occ = 0;
    }

    /// Berth: makes a packed row a plain row of default cells, which `reset` then resets: the
    /// packed cells are not needed.
    #[cold]
    #[inline(never)]
    fn reset_packed(&mut self) {
        if let Some(packed) = self.packed.take() {
            self.inner = decode_blank(&packed);
            self.occ = 0;
        }
    }

    /// Berth: resets the row to `template` on the cells of `cells`, a plain row's cells of which
    /// the first `occ` may differ from its last (the cells a row gave up when it was packed).
    #[inline]
    pub(crate) fn reset_with<D>(&mut self, cells: Vec<T>, occ: usize, template: &T)
    where
        T: ResetDiscriminant<D> + GridCell,
        D: PartialEq,
    {
        if cells.len() == self.len() {
            self.packed = None;
            self.inner = cells;
            self.occ = occ;
        }
        self.reset(template);
    }
}

impl<T> Row<T> {
    /// Berth: the cells of the row, decoded and kept if the row is packed.
    #[inline]
    fn cells(&self) -> &[T] {
        match &self.packed {
            None => &self.inner,
            Some(packed) => packed.cells(),
        }
    }

    /// Berth: the cells of the row, decoded into a temporary copy if the row is packed (where
    /// [`Index`] would keep the decoded cells until the grid sheds them). For readers that go
    /// through many history rows once, such as rendering them as text.
    pub fn cells_uncached(&self) -> Cow<'_, [T]>
    where
        T: Clone,
    {
        match &self.packed {
            None => Cow::Borrowed(&self.inner),
            Some(packed) => packed.cells_uncached(),
        }
    }

    /// Berth: whether the row holds its cells in compact form.
    pub fn is_packed(&self) -> bool {
        self.packed.is_some()
    }

    /// Berth: whether the row is packed and holds a decoded copy of its cells (made by a shared
    /// access, dropped by [`Grid::shed_decoded`](super::Grid::shed_decoded)).
    pub fn is_decoded(&self) -> bool {
        self.packed.as_ref().is_some_and(|packed| packed.cells.get().is_some())
    }

    /// Berth: turns a packed row back into a plain one, before a change.
    #[inline]
    fn unpack(&mut self) {
        if self.packed.is_some() {
            self.unpack_packed();
        }
    }

    #[cold]
    #[inline(never)]
    fn unpack_packed(&mut self) {
        // A changed history row is packed again by the next `shed_decoded`.
        DECODES.fetch_add(1, Ordering::Relaxed);
        if let Some(packed) = self.packed.take() {
            self.inner = packed.into_cells();
        }
    }

    /// Berth: packs a plain row with [`GridCell::pack`] (a packed row drops its decoded cells
    /// instead). Returns the cells it gave up and the row's `occ`, for reuse, if it packed.
    pub(crate) fn pack(&mut self, scratch: &mut Vec<u8>) -> Option<(Vec<T>, usize)>
    where
        T: GridCell,
    {
        if let Some(packed) = &mut self.packed {
            packed.cells.take();
            return None;
        }
        if self.inner.is_empty() {
            return None;
        }
        let packed = T::pack(&self.inner, self.occ, scratch)?;
        self.packed = Some(Box::new(packed));
        Some((std::mem::take(&mut self.inner), self.occ))
    }
}

#[allow(clippy::len_without_is_empty)]
impl<T> Row<T> {
    #[inline]
    pub fn from_vec(vec: Vec<T>, occ: usize) -> Row<T> {
        Row { inner: vec, occ, packed: None }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match &self.packed {
            None => self.inner.len(),
            Some(packed) => packed.columns(),
        }
    }

    #[inline]
    pub fn last(&self) -> Option<&T> {
        self.cells().last()
    }

    #[inline]
    pub fn last_mut(&mut self) -> Option<&mut T> {
        self.unpack();
        self.occ = self.inner.len();
        self.inner.last_mut()
    }

    #[inline]
    pub fn append(&mut self, vec: &mut Vec<T>)
    where
        T: GridCell,
    {
        self.unpack();
        self.occ += vec.len();
        self.inner.append(vec);
    }

    #[inline]
    pub fn append_front(&mut self, mut vec: Vec<T>) {
        self.unpack();
        self.occ += vec.len();

        vec.append(&mut self.inner);
        self.inner = vec;
    }

    /// Check if all cells in the row are empty.
    #[inline]
    pub fn is_clear(&self) -> bool
    where
        T: GridCell,
    {
        self.cells().iter().all(GridCell::is_empty)
    }

    #[inline]
    pub fn front_split_off(&mut self, at: usize) -> Vec<T> {
        self.unpack();
        self.occ = self.occ.saturating_sub(at);

        let mut split = self.inner.split_off(at);
        std::mem::swap(&mut split, &mut self.inner);
        split
    }
}

impl<'a, T> IntoIterator for &'a Row<T> {
    type IntoIter = slice::Iter<'a, T>;
    type Item = &'a T;

    #[inline]
    fn into_iter(self) -> slice::Iter<'a, T> {
        self.cells().iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Row<T> {
    type IntoIter = slice::IterMut<'a, T>;
    type Item = &'a mut T;

    #[inline]
    fn into_iter(self) -> slice::IterMut<'a, T> {
        self.unpack();
        self.occ = self.len();
        self.inner.iter_mut()
    }
}

impl<T> Index<Column> for Row<T> {
    type Output = T;

    #[inline]
    fn index(&self, index: Column) -> &T {
        &self.cells()[index.0]
    }
}

impl<T> IndexMut<Column> for Row<T> {
    #[inline]
    fn index_mut(&mut self, index: Column) -> &mut T {
        self.unpack();
        self.occ = max(self.occ, *index + 1);
        &mut self.inner[index.0]
    }
}

impl<T> Index<Range<Column>> for Row<T> {
    type Output = [T];

    #[inline]
    fn index(&self, index: Range<Column>) -> &[T] {
        &self.cells()[(index.start.0)..(index.end.0)]
    }
}

impl<T> IndexMut<Range<Column>> for Row<T> {
    #[inline]
    fn index_mut(&mut self, index: Range<Column>) -> &mut [T] {
        self.unpack();
        self.occ = max(self.occ, *index.end);
        &mut self.inner[(index.start.0)..(index.end.0)]
    }
}

impl<T> Index<RangeTo<Column>> for Row<T> {
    type Output = [T];

    #[inline]
    fn index(&self, index: RangeTo<Column>) -> &[T] {
        &self.cells()[..(index.end.0)]
    }
}

impl<T> IndexMut<RangeTo<Column>> for Row<T> {
    #[inline]
    fn index_mut(&mut self, index: RangeTo<Column>) -> &mut [T] {
        self.unpack();
        self.occ = max(self.occ, *index.end);
        &mut self.inner[..(index.end.0)]
    }
}

impl<T> Index<RangeFrom<Column>> for Row<T> {
    type Output = [T];

    #[inline]
    fn index(&self, index: RangeFrom<Column>) -> &[T] {
        &self.cells()[(index.start.0)..]
    }
}

impl<T> IndexMut<RangeFrom<Column>> for Row<T> {
    #[inline]
    fn index_mut(&mut self, index: RangeFrom<Column>) -> &mut [T] {
        self.unpack();
        self.occ = self.len();
        &mut self.inner[(index.start.0)..]
    }
}

impl<T> Index<RangeFull> for Row<T> {
    type Output = [T];

    #[inline]
    fn index(&self, _: RangeFull) -> &[T] {
        &self.cells()[..]
    }
}

impl<T> IndexMut<RangeFull> for Row<T> {
    #[inline]
    fn index_mut(&mut self, _: RangeFull) -> &mut [T] {
        self.unpack();
        self.occ = self.len();
        &mut self.inner[..]
    }
}

impl<T> Index<RangeToInclusive<Column>> for Row<T> {
    type Output = [T];

    #[inline]
    fn index(&self, index: RangeToInclusive<Column>) -> &[T] {
        &self.cells()[..=(index.end.0)]
    }
}

impl<T> IndexMut<RangeToInclusive<Column>> for Row<T> {
    #[inline]
    fn index_mut(&mut self, index: RangeToInclusive<Column>) -> &mut [T] {
        self.unpack();
        self.occ = max(self.occ, *index.end + 1);
        &mut self.inner[..=(index.end.0)]
    }
}
