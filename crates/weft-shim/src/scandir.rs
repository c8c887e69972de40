//! `scandir`, `scandir64`, `scandirat` and `scandirat64` of a data directory or `/proc`:
//! glibc's own open and read the directory through its internal `opendir`/`readdir`, which the
//! shim's hooks never see (they would list the real, empty placeholder), so these list through
//! the shim's handles ([`crate::disklist::open_ours`]) and build the caller's array with
//! `malloc`, as glibc does: the caller frees each entry and the array. Any other directory is
//! glibc's. The filter and the comparison are the program's code and run outside the guard.

use crate::disklist::{closedir, open_ours, readdir64};
use crate::prelude::*;

type Entry = libc::dirent64;
type Filter = Option<unsafe extern "C" fn(*const Entry) -> c_int>;
type Compare = Option<unsafe extern "C" fn(*const *const Entry, *const *const Entry) -> c_int>;
type Sort = unsafe extern "C" fn(*const c_void, *const c_void) -> c_int;

/// glibc's names for one listing (`dirent` and `dirent64` have one layout on x86-64): from the
/// current directory, or `at` a directory descriptor.
macro_rules! entry {
    ($name:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            path: *const c_char,
            list: *mut *mut *mut Entry,
            filter: Filter,
            cmp: Compare,
        ) -> c_int {
            scan_at(libc::AT_FDCWD, path, list, filter, cmp)
        }
    };
    ($name:ident, at) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            dirfd: c_int,
            path: *const c_char,
            list: *mut *mut *mut Entry,
            filter: Filter,
            cmp: Compare,
        ) -> c_int {
            scan_at(dirfd, path, list, filter, cmp)
        }
    };
}

entry!(scandir);
entry!(scandir64);
entry!(scandirat, at);
entry!(scandirat64, at);

unsafe fn scan_at(
    dirfd: c_int,
    path: *const c_char,
    list: *mut *mut *mut Entry,
    filter: Filter,
    cmp: Compare,
) -> c_int {
    let ours = match Guard::enter() {
        Some(_g) if active() => open_ours(dirfd, path),
        _ => None,
    };
    match ours {
        Some(dirp) if dirp.is_null() => -1,
        Some(dirp) => collect(dirp, list, filter, cmp),
        None => real!(scandirat64: fn(c_int, *const c_char, *mut *mut *mut Entry, Filter, Compare)
            -> c_int)(dirfd, path, list, filter, cmp),
    }
}

/// Reads `dirp` to its end (closing it): the entries `filter` keeps, each a `malloc`ed copy,
/// in an array sorted by `cmp`, stored in `*list`; their count, or -1 (`ENOMEM`).
unsafe fn collect(
    dirp: *mut libc::DIR,
    list: *mut *mut *mut Entry,
    filter: Filter,
    cmp: Compare,
) -> c_int {
    let mut v: *mut *mut Entry = ptr::null_mut();
    let (mut n, mut cap) = (0usize, 0usize);
    loop {
        let e = readdir64(dirp);
        if e.is_null() {
            break;
        }
        if filter.is_some_and(|keep| keep(e) == 0) {
            continue;
        }
        if n == cap {
            cap = (cap * 2).max(16);
            let grown = libc::realloc(v.cast(), cap * core::mem::size_of::<*mut Entry>());
            if grown.is_null() {
                return out_of_memory(dirp, v, n);
            }
            v = grown.cast();
        }
        let len = (*e).d_reclen as usize;
        let copy = libc::malloc(len).cast::<Entry>();
        if copy.is_null() {
            return out_of_memory(dirp, v, n);
        }
        ptr::copy_nonoverlapping(e.cast::<u8>(), copy.cast::<u8>(), len);
        *v.add(n) = copy;
        n += 1;
    }
    closedir(dirp);
    if let Some(cmp) = cmp.filter(|_| n > 1) {
        // SAFETY: qsort hands the comparison pointers to the array's elements, which are
        // `*mut Entry`: what scandir's comparison takes (glibc sorts so too).
        let sort: Sort = core::mem::transmute::<_, Sort>(cmp);
        libc::qsort(v.cast(), n, core::mem::size_of::<*mut Entry>(), Some(sort));
    }
    *list = v;
    n as c_int
}

/// Frees what `collect` had gathered and closes `dirp`: -1 with `ENOMEM`.
unsafe fn out_of_memory(dirp: *mut libc::DIR, v: *mut *mut Entry, n: usize) -> c_int {
    for i in 0..n {
        libc::free((*v.add(i)).cast());
    }
    libc::free(v.cast());
    closedir(dirp);
    *libc::__errno_location() = libc::ENOMEM;
    -1
}
