//! Token ids -> Python `list[int]`, the conversion every encode call ends with.
//!
//! Building a million-element list with a fresh `int` object per id costs as much as encoding
//! the text. [`list`] fills lists from one `int` object per token id, kept for the life of the
//! process and shared by every encoding (see [`table`]), so an item is a load and a store.
//!
//! [`with_ids`] lends each thread one id vector that outlives the call: a fresh vector of a
//! few megabytes is fresh pages from the kernel, and perf on `encode_ordinary` of 2 MB of
//! English counted page faults (zeroing, mapping, unmapping, growing by `memmove`) at about a
//! tenth of the call. A vector of up to [`KEPT_IDS`] ids is kept for the next call.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Most ids whose vector a thread keeps between calls: 4 MB, about 4 MB of English text's ids.
/// A larger output's vector is freed, so what an idle thread holds stays small.
const KEPT_IDS: usize = 1 << 20;

thread_local! {
    static IDS: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The ids to reserve for a text of `bytes` bytes: one per byte, the most there can be (every
/// token is at least one byte), so the vector never grows. Growing copies it into fresh pages,
/// which fault, and random letters or base64 give 0.6-0.7 ids per byte, past the one per two
/// bytes reserved before. Real text needs a quarter of this; the pages reserved but never
/// written cost no memory.
pub fn reserve_for(bytes: usize) -> usize {
    bytes + 16
}

/// An empty id vector with room for `n` ids, or MemoryError: the room is sized by the input
/// (one id per byte), so a huge text must not abort the process when it cannot be had.
pub fn ids_vec(n: usize) -> PyResult<Vec<u32>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| out_of_memory(n))?;
    Ok(v)
}

/// The MemoryError for a text whose ids (up to `n`, one per byte) cannot be given room.
pub fn out_of_memory(n: usize) -> PyErr {
    pyo3::exceptions::PyMemoryError::new_err(format!(
        "cannot reserve room for the ids of a text of {} bytes (up to one id per byte, {} bytes)",
        n.saturating_sub(16),
        n.saturating_mul(4)
    ))
}

/// Runs `f` with this thread's empty id vector, reserved for `reserve` ids, and gives the
/// vector back afterwards (kept when it is not too large). Re-entrant: a nested call gets a
/// fresh vector. MemoryError, without calling `f`, if the room cannot be reserved.
pub fn with_ids<R>(reserve: usize, f: impl FnOnce(&mut Vec<u32>) -> PyResult<R>) -> PyResult<R> {
    let mut ids = IDS.with(|c| c.take());
    ids.clear();
    if ids.capacity() < reserve {
        // A fresh vector, not `reserve`: growing would copy the old contents for nothing.
        // The old one is freed first, so its memory counts towards the new one.
        drop(ids);
        ids = ids_vec(reserve)?;
    }
    let r = f(&mut ids);
    if ids.capacity() <= KEPT_IDS {
        IDS.with(|c| c.set(ids));
    }
    r
}

/// Ids below this have their `int` kept in [`table`]; a larger one (no vocabulary we know of
/// has them) gets a fresh `int` each time it is listed.
const TABLED_IDS: usize = 1 << 20;

/// The process's `int` of every token id below [`TABLED_IDS`], each made the first time the id
/// is listed: 8 MB of address space, allocated zeroed on the first list, so only the pages of
/// ids in use are ever touched (o200k's 200,000 ids: at most 1.6 MB). An id is the same `int`
/// whatever the vocabulary, so every encoding shares it, as CPython shares its small ints. If
/// the table cannot be allocated, every id gets a fresh `int` instead.
fn table() -> &'static [AtomicPtr<ffi::PyObject>] {
    static TABLE: OnceLock<&'static [AtomicPtr<ffi::PyObject>]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let layout = std::alloc::Layout::array::<AtomicPtr<ffi::PyObject>>(TABLED_IDS).expect("8 MB");
        // Safety: the layout is not zero-sized, and all-zero bytes are null `AtomicPtr`s. The
        // table is never freed: it lives as long as the `int`s it holds.
        unsafe {
            let p = std::alloc::alloc_zeroed(layout).cast::<AtomicPtr<ffi::PyObject>>();
            if p.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(p, TABLED_IDS)
            }
        }
    })
}

/// Whether a listed `int` takes a reference-count increment: only where its count is not ours
/// to set ([`keep_forever`]): the limited API, the free-threaded build, PyPy, GraalPy and 32-bit
/// builds (whose counts for objects that never die differ from version to version).
const COUNTED: bool = cfg!(any(Py_LIMITED_API, Py_GIL_DISABLED, PyPy, GraalPy, not(target_pointer_width = "64")));

/// Sets the reference count of an `int` entering [`table`] so that it is never freed, whatever
/// lists that took it without an increment give back when they die (see [`int`]). Before
/// CPython 3.12 the count is a plain integer that every reference adds one to and takes one
/// from: it is raised by 2^62, and zero would then take 2^62 items listed (at a billion a
/// second, 146 years). From 3.12 on (PEP 683) a count whose low 32 bits read as a negative
/// `int32` marks an immortal object: decrements leave it alone (and 3.12's and 3.13's
/// increments raise it at most to 2^32 - 1, still immortal). The count becomes 3 << 30, 3.14's
/// own count for new immortal objects (3.12 and 3.13 start theirs at 2^32 - 1; all three test
/// the same bit). An `int` that is already immortal (3.12's small ints, which
/// `PyLong_FromUnsignedLong` returns for 0-256) is left as it is.
#[inline(never)]
unsafe fn keep_forever(obj: *mut ffi::PyObject) {
    #[cfg(not(any(Py_3_12, Py_LIMITED_API, Py_GIL_DISABLED, PyPy, GraalPy, not(target_pointer_width = "64"))))]
    {
        (*obj).ob_refcnt += 1 << 62;
    }
    #[cfg(all(Py_3_12, not(any(Py_LIMITED_API, Py_GIL_DISABLED, PyPy, GraalPy, not(target_pointer_width = "64")))))]
    {
        let count = &mut (*obj).ob_refcnt.ob_refcnt;
        if (*count as i32) >= 0 {
            *count = 3 << 30;
        }
    }
    let _ = obj;
}

/// The `int` for `id`, as a new reference (or null with a Python error set).
///
/// A tabled `int` is returned without an increment of its reference count (unless
/// [`COUNTED`]): its count was set by [`keep_forever`] when it entered the table, so no
/// number of lists freed can bring it to zero. Why: the increment is a write to the `int`
/// object, a line of its own for each distinct id, and it was half of building a list (list
/// minus numpy output, warm, o200k, 1.5 MB, CPython 3.11, medians of six processes: en 0.57 ->
/// 0.37 ms, code 0.69 -> 0.43, de 0.94 -> 0.52, tr 0.93 -> 0.39). CPython 3.11 gives its own
/// static objects (the small ints among them) a count of 999,999,999 so that they never reach
/// zero, and 3.12 makes such objects official. The `int` is never freed, as the table, which
/// lives as long as the process, would not free it anyway. The one visible difference is what
/// `sys.getrefcount` says of such an `int`.
///
/// Safety: the GIL is held (the atomics make a race between two threads attached to the
/// interpreter harmless all the same).
#[inline]
unsafe fn int(slots: &[AtomicPtr<ffi::PyObject>], id: u32) -> *mut ffi::PyObject {
    let Some(slot) = slots.get(id as usize) else {
        return ffi::PyLong_FromUnsignedLong(id as _);
    };
    let mut p = slot.load(Ordering::Acquire);
    if p.is_null() {
        let fresh = ffi::PyLong_FromUnsignedLong(id as _);
        if fresh.is_null() {
            return fresh;
        }
        // The reference `fresh` came with is the table's.
        p = match slot.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                keep_forever(fresh);
                fresh
            }
            Err(other) => {
                ffi::Py_DECREF(fresh);
                other
            }
        };
    }
    if COUNTED {
        ffi::Py_INCREF(p);
    }
    p
}

/// The `list[int]` of `ids` (`u8` too: a chat mask's 0s and 1s are ids 0 and 1's ints).
pub fn list<'py, T: Copy + Into<u32>>(py: Python<'py>, ids: &[T]) -> PyResult<Bound<'py, PyList>> {
    let slots = table();
    // Safety: we hold the GIL (`py`); `int` is called with it, and `list_from` returns the
    // list only whole (on failure it is released by the Bound's drop).
    unsafe { list_from(py, ids.len(), |i| int(slots, ids[i].into())) }
}

/// The `list` of `n` items, the i-th a new reference from `item(i)` (or null with a Python
/// error set, which is returned), for the one thread holding the GIL.
///
/// Not `PyList_New(n)`, which zeroes the item array (`calloc`) before the items are written
/// over it: 3 MB for the ids of 1.5 MB of English (o200k), 0.27-0.31 ms of a 3.4 ms call on
/// our machine. Here the array is allocated unwritten and the list's length stays 0 until
/// every item is in, so the list is whole at every step (CPython's invariant for its public
/// `PyListObject`: `0 <= ob_size <= allocated`, the first `ob_size` items set) and a failure
/// part-way leaves a list of the items made so far, which its deallocation frees with the
/// array (`PyMem_Free`). The free-threaded build allocates the array with a header of its
/// own, and the limited API hides the struct: there `PyList_New` stays.
#[cfg(not(any(Py_LIMITED_API, Py_GIL_DISABLED, PyPy, GraalPy)))]
unsafe fn list_from(py: Python<'_>, n: usize, mut item: impl FnMut(usize) -> *mut ffi::PyObject) -> PyResult<Bound<'_, PyList>> {
    let list = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(0))?;
    if n == 0 {
        return Ok(list.downcast_into_unchecked());
    }
    let bytes = n.checked_mul(std::mem::size_of::<*mut ffi::PyObject>());
    let items = bytes.map_or(std::ptr::null_mut(), |b| ffi::PyMem_Malloc(b)).cast::<*mut ffi::PyObject>();
    if items.is_null() {
        return Err(pyo3::exceptions::PyMemoryError::new_err(format!("no memory for a list of {n} ids")));
    }
    let raw = list.as_ptr().cast::<ffi::PyListObject>();
    (*raw).ob_item = items;
    (*raw).allocated = n as ffi::Py_ssize_t;
    for i in 0..n {
        let obj = item(i);
        if obj.is_null() {
            (*raw).ob_base.ob_size = i as ffi::Py_ssize_t;
            return Err(PyErr::fetch(py));
        }
        *items.add(i) = obj;
    }
    (*raw).ob_base.ob_size = n as ffi::Py_ssize_t;
    Ok(list.downcast_into_unchecked())
}

/// [`list_from`] where CPython's list struct is not ours to fill: `PyList_New`, then the items.
#[cfg(any(Py_LIMITED_API, Py_GIL_DISABLED, PyPy, GraalPy))]
unsafe fn list_from(py: Python<'_>, n: usize, mut item: impl FnMut(usize) -> *mut ffi::PyObject) -> PyResult<Bound<'_, PyList>> {
    let list = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(n as ffi::Py_ssize_t))?;
    for i in 0..n {
        let obj = item(i);
        if obj.is_null() {
            // The remaining items are NULL, which list deallocation tolerates.
            return Err(PyErr::fetch(py));
        }
        ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, obj);
    }
    Ok(list.downcast_into_unchecked())
}

/// Reservations smaller than this (glibc's initial mmap threshold) come from malloc's heap, not
/// a mapping of their own: shrinking one is an in-place `realloc` that gives the tail back to the
/// heap and leaves glibc's mmap threshold alone (only freed mappings move it). So the arrays of
/// short texts hold their ids and no more: a list of a million arrays of 4 KB documents would
/// otherwise hold their whole reservations, up to four times their ids.
const SHRINK_BELOW: usize = 128 << 10;

/// Token ids (or a flat batch's offsets) handed to Python without a copy: numpy wraps them
/// through the buffer protocol (`np.frombuffer(buf, np.uint32)`), and the array keeps this
/// object alive.
///
/// `encode_to_numpy` used to encode into the thread's kept vector and copy the ids into a
/// fresh `bytearray` (zeroed by PyO3 first, then filled id by id): two extra passes over the
/// output and the fresh pages of the bytearray on top of those of the vector. Encoding into a
/// vector of its own and giving that to numpy leaves only the pages the ids are written to.
///
/// A large vector is kept as it was encoded into, with its whole reservation (one id per byte
/// of text), not shrunk to its length (a small one is: [`SHRINK_BELOW`]). Shrinking a large
/// vector is `mremap`, which is cheap, but the smaller block it leaves is what glibc later
/// frees, and glibc sizes its mmap threshold by the blocks freed: the next call's reservation,
/// larger than that block, was mmapped afresh, and every page its ids were written to faulted
/// (perf: 380 page faults per 1.5 MB English text, about 8% of `encode_to_numpy`, which ran at
/// 0.91x `count`). Freed whole, the block is reused by the next call of its size, already
/// mapped. What such an array holds beyond its ids is address space; only pages ever written
/// take memory, so the most one can hold is 4 bytes per byte of its text (the reservation,
/// when a reused block was written further by an earlier, denser text).
///
/// The buffer is writable (an array from `encode_to_numpy` was writable before, over a
/// bytearray): only the exporter's raw pointer is written through, never a Rust reference.
#[pyclass(frozen, module = "bytepair._core")]
pub struct IdBuffer {
    /// A `Vec<u32>` (`kind` U32) or `Vec<i64>` (I64) taken apart in `new`, rebuilt in `drop`.
    ptr: *mut u8,
    len: usize,
    capacity: usize,
    kind: Kind,
    /// `Py_buffer.shape` and `.strides` point here: they must live as long as the exports,
    /// which hold a reference to this object.
    shape: [ffi::Py_ssize_t; 1],
    strides: [ffi::Py_ssize_t; 1],
}

/// What an [`IdBuffer`] holds: its element type, which the vector must be rebuilt with to be
/// freed (size and alignment), and the buffer protocol's format of it.
#[derive(Clone, Copy)]
enum Kind {
    U32,
    I64,
}

impl Kind {
    fn itemsize(self) -> usize {
        match self {
            Kind::U32 => 4,
            Kind::I64 => 8,
        }
    }

    /// struct-module formats, native size: "I" is 4 bytes and "q" 8 wherever this builds
    /// (numpy's uint32 and int64).
    fn format(self) -> &'static std::ffi::CStr {
        match self {
            Kind::U32 => c"I",
            Kind::I64 => c"q",
        }
    }
}

// Safety: the elements are owned (a vector taken apart, freed in `drop`) and never aliased by
// a Rust reference; Python reaches them only through the buffer protocol.
unsafe impl Send for IdBuffer {}
unsafe impl Sync for IdBuffer {}

impl IdBuffer {
    fn from_parts(ptr: *mut u8, len: usize, capacity: usize, kind: Kind) -> Self {
        let strides = [kind.itemsize() as ffi::Py_ssize_t];
        IdBuffer { ptr, len, capacity, kind, shape: [len as ffi::Py_ssize_t], strides }
    }

    /// Token ids, for a numpy `uint32` array.
    pub fn new(mut ids: Vec<u32>) -> Self {
        if ids.capacity() * 4 < SHRINK_BELOW {
            ids.shrink_to_fit();
        }
        let mut ids = std::mem::ManuallyDrop::new(ids);
        IdBuffer::from_parts(ids.as_mut_ptr().cast(), ids.len(), ids.capacity(), Kind::U32)
    }

    /// Offsets, for a numpy `int64` array.
    pub fn offsets(offsets: Vec<i64>) -> Self {
        let mut offsets = std::mem::ManuallyDrop::new(offsets);
        IdBuffer::from_parts(offsets.as_mut_ptr().cast(), offsets.len(), offsets.capacity(), Kind::I64)
    }
}

impl Drop for IdBuffer {
    fn drop(&mut self) {
        // Safety: `ptr`/`len`/`capacity` are those of the vector of `kind`'s element type taken
        // apart in `new`/`offsets`, rebuilt only here. An export holds a reference to this
        // object, so none outlives the drop.
        unsafe {
            match self.kind {
                Kind::U32 => drop(Vec::from_raw_parts(self.ptr.cast::<u32>(), self.len, self.capacity)),
                Kind::I64 => drop(Vec::from_raw_parts(self.ptr.cast::<i64>(), self.len, self.capacity)),
            }
        }
    }
}

#[pymethods]
impl IdBuffer {
    fn __len__(&self) -> usize {
        self.len
    }

    /// Safety (PyO3's contract for buffer slots): `view` is the caller's `Py_buffer`.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: std::os::raw::c_int) -> PyResult<()> {
        if view.is_null() {
            return Err(pyo3::exceptions::PyBufferError::new_err("bytepair: NULL Py_buffer"));
        }
        let this = slf.get();
        let v = &mut *view;
        v.buf = this.ptr as *mut std::os::raw::c_void;
        v.len = (this.len * this.kind.itemsize()) as ffi::Py_ssize_t;
        v.readonly = 0;
        v.itemsize = this.kind.itemsize() as ffi::Py_ssize_t;
        v.format = if flags & ffi::PyBUF_FORMAT != 0 { this.kind.format().as_ptr() as *mut _ } else { std::ptr::null_mut() };
        v.ndim = 1;
        v.shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND { this.shape.as_ptr() as *mut _ } else { std::ptr::null_mut() };
        v.strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES { this.strides.as_ptr() as *mut _ } else { std::ptr::null_mut() };
        v.suboffsets = std::ptr::null_mut();
        v.internal = std::ptr::null_mut();
        // Last, once nothing can fail: the export's reference to this object.
        v.obj = slf.into_any().into_ptr();
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        // Nothing to undo: the view's reference is released by Python (PyBuffer_Release).
    }
}
