//! `dlsym` interposition: a library that finds a libc function with `dlsym(RTLD_NEXT, name)`
//! must reach the shim's hook, as a direct call would.
//!
//! Interposers resolve "the real function" that way: Debian's `libjemalloc.so.2` creates its
//! background thread through `dlsym(RTLD_NEXT, "pthread_create")`. Looked up from jemalloc, the
//! next definition after it is libc's, so the thread would be created behind the shim's back
//! (a raw `clone3`), run unseen and make runs nondeterministic. Here `RTLD_NEXT` from any
//! object but the shim answers the shim's own hook for every function the shim defines (it
//! interposes that function for the whole process); every other name gets exactly the
//! `RTLD_NEXT` answer relative to the real caller, found from the caller's return address.
//!
//! A look-up on a library's own handle (`dlopen("libc.so.6")`, as Python's `ctypes.CDLL` does)
//! would answer libc's definition and bypass the hook the same way: where that answer is libc's
//! and the shim defines the name, the shim's hook is answered instead. `dlvsym` is not
//! interposed (the shim finds libc's `dlsym` with it), so a versioned look-up still reaches
//! libc's own function; a fork made that way is caught by the atfork watch (`exec.rs`).

use core::ffi::{c_char, c_int, c_void};
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// libc's `dlsym`, found with `dlvsym` (which the shim does not hook).
fn real_dlsym() -> Option<DlsymFn> {
    static REAL: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
    let mut p = REAL.load(Ordering::Relaxed);
    if p.is_null() {
        for version in [&b"GLIBC_2.34\0"[..], b"GLIBC_2.2.5\0"] {
            // SAFETY: NUL-terminated literals; dlvsym only reads them.
            p = unsafe {
                libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr().cast())
            };
            if !p.is_null() {
                break;
            }
        }
        REAL.store(p, Ordering::Relaxed);
    }
    // SAFETY: p is libc's dlsym, whose C signature DlsymFn matches.
    (!p.is_null()).then(|| unsafe { core::mem::transmute::<*mut c_void, DlsymFn>(p) })
}

/// The program's `dlsym`: records the caller's return address and continues in
/// [`dlsym_from`]. Naked so that the return address is exactly where the caller left it.
#[no_mangle]
#[unsafe(naked)]
pub unsafe extern "C" fn dlsym(_handle: *mut c_void, _name: *const c_char) -> *mut c_void {
    core::arch::naked_asm!("mov rdx, [rsp]", "jmp {}", sym dlsym_from)
}

/// Loaded objects in load order (as `dl_iterate_phdr` reports them): address range and name.
struct Objects {
    len: usize,
    list: [(usize, usize, *const c_char); 256],
}

impl Objects {
    fn index_of(&self, addr: usize) -> Option<usize> {
        self.list[..self.len].iter().position(|&(lo, hi, _)| (lo..hi).contains(&addr))
    }
}

unsafe extern "C" fn collect(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is the `Objects` passed to dl_iterate_phdr below; `info` is valid for the
    // duration of this callback, its phdrs array holds `dlpi_phnum` entries.
    unsafe {
        let objs = &mut *data.cast::<Objects>();
        if objs.len == objs.list.len() {
            return 1;
        }
        let info = &*info;
        let (mut lo, mut hi) = (usize::MAX, 0usize);
        for i in 0..info.dlpi_phnum as usize {
            let ph = &*info.dlpi_phdr.add(i);
            if ph.p_type == libc::PT_LOAD {
                let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
                lo = lo.min(start);
                hi = hi.max(start + ph.p_memsz as usize);
            }
        }
        objs.list[objs.len] = (lo, hi, info.dlpi_name);
        objs.len += 1;
    }
    0
}

fn objects() -> Objects {
    let mut objs = Objects { len: 0, list: [(0, 0, ptr::null()); 256] };
    // SAFETY: `collect` only writes into `objs`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut objs).cast()) };
    objs
}

/// `name` as defined by the object at `objs.list[i]` itself (not its dependencies).
fn lookup_in(objs: &Objects, i: usize, name: *const c_char, real: DlsymFn) -> *mut c_void {
    let (lo, hi, path) = objs.list[i];
    if path.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `path` is the loader's NUL-terminated name of a loaded object; RTLD_NOLOAD only
    // takes a reference to it, released below.
    unsafe {
        let h = if *path == 0 {
            libc::dlopen(ptr::null(), libc::RTLD_LAZY | libc::RTLD_NOLOAD)
        } else {
            libc::dlopen(path, libc::RTLD_LAZY | libc::RTLD_NOLOAD)
        };
        if h.is_null() {
            return ptr::null_mut();
        }
        let p = real(h, name);
        libc::dlclose(h);
        if (lo..hi).contains(&(p as usize)) {
            p
        } else {
            ptr::null_mut()
        }
    }
}

/// Whether `p` is a definition in libc, or in the vDSO (glibc's `time` and `gettimeofday` are
/// IFUNCs: a look-up answers the vDSO function they resolve to).
pub(crate) fn in_libc(p: *mut c_void) -> bool {
    if p.is_null() {
        return false;
    }
    // SAFETY: dladdr only reads the loader's tables; dli_fname is NUL-terminated when set.
    unsafe {
        let mut dl: libc::Dl_info = core::mem::zeroed();
        libc::dladdr(p, &mut dl) != 0 && !dl.dli_fname.is_null() && {
            let f = core::ffi::CStr::from_ptr(dl.dli_fname).to_bytes();
            f.windows(7).any(|w| w == b"libc.so") || f.starts_with(b"linux-vdso")
        }
    }
}

/// For libc's definition `p` of `name`, found on a handle by `caller`: the shim's hook of
/// `name` where the shim has one (and the caller is not the shim itself), else `p`.
fn hook_for(p: *mut c_void, name: *const c_char, caller: usize, real: DlsymFn) -> *mut c_void {
    let objs = objects();
    let Some(shim) = shim_index(&objs) else { return p };
    if objs.index_of(caller) == Some(shim) {
        return p;
    }
    let own = lookup_in(&objs, shim, name, real);
    if own.is_null() {
        p
    } else {
        own
    }
}

/// The object that holds this function: the shim.
fn shim_index(objs: &Objects) -> Option<usize> {
    objs.index_of(shim_index as *const () as usize)
}

extern "C" fn dlsym_from(handle: *mut c_void, name: *const c_char, caller: usize) -> *mut c_void {
    let Some(real) = real_dlsym() else { return ptr::null_mut() };
    if name.is_null() {
        // SAFETY: forwarded as the program asked.
        return unsafe { real(handle, name) };
    }
    if handle != libc::RTLD_NEXT {
        // SAFETY: forwarded as the program asked.
        let p = unsafe { real(handle, name) };
        return if in_libc(p) { hook_for(p, name, caller, real) } else { p };
    }
    let objs = objects();
    let (Some(shim), Some(from)) = (shim_index(&objs), objs.index_of(caller)) else {
        // SAFETY: as asked; relative to the shim, the best answer without a known caller.
        return unsafe { real(handle, name) };
    };
    if from == shim {
        // SAFETY: the shim's own look-up of the function it wraps: next after the shim.
        return unsafe { real(handle, name) };
    }
    let own = lookup_in(&objs, shim, name, real);
    if !own.is_null() {
        return own;
    }
    (from + 1..objs.len)
        .map(|i| lookup_in(&objs, i, name, real))
        .find(|p| !p.is_null())
        .unwrap_or(ptr::null_mut())
}
