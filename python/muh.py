"""muh.py — a thin ctypes binding of libmuh's public API (include/muh/libmuh.h).

Online tuning from Python: the program times its own function, libmuh's
session owns the space, the strategy, the store and the bookkeeping. Every
decision is the library's; this file only moves arguments across:

    import muh
    with muh.Session("examples/online.yaml", budget=12, seed=1) as s:
        for p in s.proposals():          # muh_session_next (and _lookup), one at a time
            t = time_my_function(**p.config)
            s.record(p, t)               # muh_session_record
        config, seconds = s.best()       # muh_session_best

The library is found by $MUH_LIBRARY (a path to libmuh.so), else by the
dynamic loader ("libmuh.so", LD_LIBRARY_PATH), else through pkg-config's
libdir for muh. Only muh_ functions are called; errors come back as
muh.Error with the status and muh_last_error()'s message. The options
struct carries its version (MUH_SESSION_OPTIONS_VERSION), so a library
whose struct changed refuses it instead of misreading it.
"""
import ctypes
import os
import subprocess

__all__ = ["Error", "Session", "Proposal", "library"]

MUH_SESSION_OPTIONS_VERSION = 1


class _SessionOptions(ctypes.Structure):  # libmuh.h: muh_session_options
    _fields_ = [("version", ctypes.c_uint), ("hw", ctypes.c_char_p), ("instance", ctypes.c_size_t),
                ("db", ctypes.c_char_p), ("fresh", ctypes.c_int), ("strategy", ctypes.c_char_p),
                ("budget", ctypes.c_uint64), ("seed", ctypes.c_uint64)]


class Error(Exception):
    """A libmuh error: .status (muh_status: 1 finding, 2 input, 3 environment,
    4 memory) and muh_last_error()'s message, with file:line:col when it is
    something the user wrote."""

    def __init__(self, status):
        self.status = status
        super().__init__(library().muh_last_error().decode(errors="replace"))


def _check(status):
    if status:
        raise Error(status)


def _find_library():
    path = os.environ.get("MUH_LIBRARY")
    if path:
        return ctypes.CDLL(path)
    try:
        return ctypes.CDLL("libmuh.so")
    except OSError:
        pass
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "muh"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        libdir = ""
    if libdir and os.path.exists(os.path.join(libdir, "libmuh.so")):
        return ctypes.CDLL(os.path.join(libdir, "libmuh.so"))
    raise OSError("libmuh.so not found: set MUH_LIBRARY, LD_LIBRARY_PATH or PKG_CONFIG_PATH")


_lib = None


def library():
    """The loaded libmuh (ctypes.CDLL), its functions typed."""
    global _lib
    if _lib is not None:
        return _lib
    lib = _find_library()
    P, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    U32P = ctypes.POINTER(ctypes.c_uint32)
    sig = {
        "muh_last_error": (ctypes.c_char_p, []),
        "muh_version": (ctypes.c_char_p, []),
        "muh_session_open": (I, [ctypes.c_char_p, ctypes.POINTER(_SessionOptions), ctypes.POINTER(P)]),
        "muh_session_close": (None, [P]),
        "muh_session_space": (P, [P]),
        "muh_session_problem": (ctypes.c_char_p, [P]),
        "muh_session_next": (I, [P, U32P, S, ctypes.POINTER(S)]),
        "muh_session_record": (I, [P, U32P, ctypes.c_double, I]),
        "muh_session_lookup": (I, [P, U32P, ctypes.POINTER(I)]),
        "muh_session_best": (I, [P, U32P, ctypes.POINTER(ctypes.c_double)]),
        "muh_session_done": (I, [P]),
        "muh_session_pending": (S, [P]),
        "muh_space_nparams": (S, [P]),
        "muh_space_valid": (ctypes.c_uint64, [P]),
        "muh_space_key": (I, [P, U32P, ctypes.c_char_p, S]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def _value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _config(key):
    """{name: value} of a canonical key "A=1,B=2" (muh_space_key's)."""
    return {k: _value(v) for k, v in (item.split("=", 1) for item in key.split(",") if item)}


class Proposal:
    """One configuration the session proposed: .config {param: value}, .key."""

    def __init__(self, cfg, key):
        self._cfg, self.key, self.config = cfg, key, _config(key)

    def __repr__(self):
        return f"Proposal({self.key})"


class Session:
    """A libmuh session for online tuning (muh_session_open).

    spec: the spec's path; budget: evaluations (0: the whole space); seed;
    strategy: a name (None: the library's default); db: a store (a rerun
    resumes); hw: a hardware profile; instance: the problem instance.
    """

    def __init__(self, spec, budget=0, seed=0, strategy=None, db=None, hw=None, instance=0, fresh=False):
        self._s = None
        lib = library()
        self._keep = [x.encode() if isinstance(x, str) else x for x in (spec, strategy, db, hw)]
        o = _SessionOptions()
        o.version = MUH_SESSION_OPTIONS_VERSION
        o.hw = self._keep[3]
        o.instance = instance
        o.db = self._keep[2]
        o.fresh = int(bool(fresh))
        o.strategy = self._keep[1]
        o.budget = budget
        o.seed = seed
        s = ctypes.c_void_p()
        _check(lib.muh_session_open(self._keep[0], ctypes.byref(o), ctypes.byref(s)))
        self._s = s
        sp = lib.muh_session_space(self._s)
        self._np = lib.muh_space_nparams(sp)
        self.valid = lib.muh_space_valid(sp)
        self.problem = lib.muh_session_problem(self._s).decode()

    def _cfg(self):
        return (ctypes.c_uint32 * max(1, self._np))()

    def _key(self, cfg):
        buf = ctypes.create_string_buffer(4096)
        _check(library().muh_space_key(library().muh_session_space(self._s), cfg, buf, len(buf)))
        return buf.value.decode()

    def next(self, k=1):
        """Up to k proposals (muh_session_next): [] when the strategy has nothing more now."""
        lib = library()
        cfgs = (ctypes.c_uint32 * (max(1, self._np) * k))()
        n = ctypes.c_size_t()
        _check(lib.muh_session_next(self._s, cfgs, k, ctypes.byref(n)))
        out = []
        for i in range(n.value):
            cfg = self._cfg()
            ctypes.memmove(cfg, ctypes.byref(cfgs, i * self._np * 4), self._np * 4)
            out.append(Proposal(cfg, self._key(cfg)))
        return out

    def lookup(self, proposal):
        """True when the session answers the proposal itself (muh_session_lookup: told
        already, or a row of the store's run, which a rerun resumes from)."""
        answered = ctypes.c_int()
        _check(library().muh_session_lookup(self._s, proposal._cfg, ctypes.byref(answered)))
        return answered.value == 1

    def proposals(self):
        """Proposals one at a time until the strategy has none (record each before
        the next); the ones the store answers (lookup) are not handed out."""
        while True:
            p = self.next(1)
            if not p:
                return
            if not self.lookup(p[0]):
                yield p[0]

    def record(self, proposal, seconds, ok=True):
        """Tells the session the time the caller measured (muh_session_record); ok=False: it failed."""
        _check(library().muh_session_record(self._s, proposal._cfg, float(seconds) if ok else 0.0, 0 if ok else 1))

    def best(self):
        """(config, seconds) of the best recorded so far (muh_session_best), or None
        when none was ok (MUH_EFINDING)."""
        cfg, t = self._cfg(), ctypes.c_double()
        rc = library().muh_session_best(self._s, cfg, ctypes.byref(t))
        if rc == 1:
            return None
        _check(rc)
        return _config(self._key(cfg)), t.value

    @property
    def done(self):
        return bool(library().muh_session_done(self._s))

    @property
    def pending(self):
        return library().muh_session_pending(self._s)

    def close(self):
        if getattr(self, "_s", None):
            library().muh_session_close(self._s)
            self._s = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
