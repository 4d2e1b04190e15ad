//! A zeroed array for the short-token index, backed by 2 MiB pages where the OS gives them.
//!
//! Why: o200k_base's index is 2 MB of slots probed at random, once per piece. With 4 KiB pages
//! that is 512 pages, far more than the CPU's first-level TLB holds, and in a virtual machine
//! each TLB miss is a two-level page walk. Measured when it went in (medians of 40 paired
//! runs, quartiles +-10%): 1.05x on English, 1.02x on German, and fewer page faults at load;
//! cheap, and never slower (docs/engine-experiments.md). On Linux the array is its own mapping,
//! aligned to 2 MiB and advised `MADV_HUGEPAGE`, so the kernel backs it with huge pages
//! (when transparent huge pages are `always` or `madvise`; otherwise it is ordinary memory and
//! nothing is lost). Anonymous mappings come zeroed, so no pass fills the array.
//! Elsewhere it is a plain zeroed `Vec`.

use std::ops::{Deref, DerefMut};

/// Arrays smaller than this stay on the heap: a huge page would waste most of itself.
#[cfg(target_os = "linux")]
const HUGE: usize = 2 << 20;

/// Types whose all-zero bytes are a valid value, equal to `T::default()`.
///
/// # Safety
/// Implement only for plain integers and arrays of them.
pub unsafe trait Zeroable: Copy + Default {}
unsafe impl Zeroable for u64 {}
unsafe impl Zeroable for [u64; 2] {}
unsafe impl Zeroable for [u64; 3] {}

pub struct ZeroedPages<T: Zeroable> {
    #[cfg(target_os = "linux")]
    mapped: Option<(std::ptr::NonNull<T>, usize)>,
    /// Owns the elements when there is no mapping (read only through `ptr`).
    _heap: Vec<T>,
    /// The first element, in the mapping or in `_heap` (whose buffer is never reallocated), so
    /// that `deref` is one load with no choice between the two: the lookups' probe loops read
    /// the slots through it, and choosing cost a second dependent load per probe.
    ptr: std::ptr::NonNull<T>,
    len: usize,
}

// Safety: the mapping is owned exclusively, like a Box<[T]>.
unsafe impl<T: Zeroable + Send> Send for ZeroedPages<T> {}
unsafe impl<T: Zeroable + Sync> Sync for ZeroedPages<T> {}

impl<T: Zeroable> ZeroedPages<T> {
    /// `len` elements, all zero.
    pub fn new(len: usize) -> Self {
        #[cfg(target_os = "linux")]
        {
            let bytes = len * std::mem::size_of::<T>();
            if bytes >= HUGE {
                if let Some(p) = map_huge(bytes) {
                    return ZeroedPages { mapped: Some((p.cast(), bytes)), _heap: Vec::new(), ptr: p.cast(), len };
                }
            }
        }
        let mut heap = vec![T::default(); len];
        let ptr = std::ptr::NonNull::from(heap.as_mut_slice()).cast();
        ZeroedPages {
            #[cfg(target_os = "linux")]
            mapped: None,
            _heap: heap,
            ptr,
            len,
        }
    }
}

/// An anonymous mapping of `bytes` (a multiple of nothing in particular) starting on a 2 MiB
/// boundary, advised for huge pages. `None` if the kernel refuses; the caller falls back.
#[cfg(target_os = "linux")]
fn map_huge(bytes: usize) -> Option<std::ptr::NonNull<u8>> {
    let size = bytes.div_ceil(HUGE) * HUGE;
    // Over-allocate by one huge page, then unmap the unaligned head and the tail.
    let total = size + HUGE;
    // Safety: a fresh private anonymous mapping; every range unmapped below lies inside it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            total,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return None;
        }
        let start = p as usize;
        let aligned = start.div_ceil(HUGE) * HUGE;
        if aligned > start {
            libc::munmap(p, aligned - start);
        }
        let end = start + total;
        if end > aligned + size {
            libc::munmap((aligned + size) as *mut libc::c_void, end - aligned - size);
        }
        // Advice only: if it fails the memory is still valid, in small pages.
        libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
        std::ptr::NonNull::new(aligned as *mut u8)
    }
}

impl<T: Zeroable> Drop for ZeroedPages<T> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some((p, bytes)) = self.mapped.take() {
            // Safety: the mapping made in `map_huge`, of `bytes` rounded up as there.
            unsafe {
                libc::munmap(p.as_ptr().cast(), bytes.div_ceil(HUGE) * HUGE);
            }
        }
    }
}

impl<T: Zeroable> Deref for ZeroedPages<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // Safety: `ptr` is the start of `len` elements owned by self: the mapping (zeroed by
        // the kernel, a valid T: `Zeroable`) or the buffer of `_heap`, which is never resized
        // or touched otherwise, so it stays where it was when `ptr` was taken.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> DerefMut for ZeroedPages<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // Safety: as in `deref`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> Clone for ZeroedPages<T> {
    fn clone(&self) -> Self {
        let mut copy = ZeroedPages::new(self.len);
        copy.copy_from_slice(self);
        copy
    }
}

/// `items` ordered by `bucket` (the top `bits` bits of each one's home slot), stable: a
/// counting sort in two linear passes over `items` (an iterator walked twice, so neither pass
/// reads the source in bucket order). A cold open-addressed table filled in this order fills
/// front to back, a page fault and a few cache misses per page, where filling it in rank order
/// took a cache and TLB miss for nearly every key; of two equal keys the earlier stays first,
/// so a duplicate is reported against the rank given first.
pub fn in_home_order<T, I, B>(items: I, bits: u32, bucket: B) -> Vec<T>
where
    T: Copy + Default,
    I: Iterator<Item = T> + Clone,
    B: Fn(&T) -> usize,
{
    let mut starts = vec![0usize; (1 << bits) + 1];
    for item in items.clone() {
        starts[bucket(&item) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut ordered = vec![T::default(); starts[starts.len() - 1]];
    for item in items {
        let at = &mut starts[bucket(&item)];
        ordered[*at] = item;
        *at += 1;
    }
    ordered
}

/// A fresh table's pages are not mapped yet, and an insert reads its slot before writing it:
/// the read would map the shared zero page and the write then fault the page a second time.
/// Writing one slot per page first faults each page once. black_box hides that the memory is
/// already zero, so the writes are not dropped.
pub fn touch_pages<T: Copy + Default>(slots: &mut [T]) {
    let slots = std::hint::black_box(slots);
    for s in slots.iter_mut().step_by(4096 / std::mem::size_of::<T>()) {
        *s = T::default();
    }
}
