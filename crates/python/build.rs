//! Tells the compiler which Python the binding is built for (`cfg(Py_GIL_DISABLED)`,
//! `cfg(Py_LIMITED_API)`, ...), as PyO3 itself is told: src/ids.rs fills CPython's list struct
//! directly only where its layout is the public one.
fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
