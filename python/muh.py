"""muh.py — a thin ctypes binding of libmuh's session (include/muh/session.h).

Online tuning from Python: the program times its own function, libmuh's
session owns the space, the strategy, the store and the bookkeeping. Every
decision is the library's; this file only moves arguments across:

    import muh
    with muh.Session("examples/online.yaml", budget=12, seed=1) as s:
        for p in s.proposals():          # session_next (and session_lookup), one at a time
            t = time_my_function(**p.config)
            s.record(p, t)               # session_record
        config, seconds = s.best()       # session_best

The library is found by $MUH_LIBRARY (a path to libmuh.so), else by the
dynamic loader ("libmuh.so", LD_LIBRARY_PATH), else through pkg-config's
libdir for muh. The layout of muh_session_opts is checked against the
library's own (session_opts_size) when the library is loaded, so a library
whose struct changed is refused instead of misread.
"""
import ctypes
import os
import subprocess

__all__ = ["Error", "Session", "Proposal", "library"]

MUH_DIAG_PATH, MUH_DIAG_MSG, MUH_DIAG_LINE = 512, 1024, 512


class _Diag(ctypes.Structure):
    _fields_ = [("file", ctypes.c_char * MUH_DIAG_PATH), ("line", ctypes.c_int), ("col", ctypes.c_int),
                ("msg", ctypes.c_char * MUH_DIAG_MSG), ("src", ctypes.c_char * MUH_DIAG_LINE)]


class _StrategyOpts(ctypes.Structure):  # strategy.h: strategy_opts
    _fields_ = [("strategy", ctypes.c_char_p), ("budget", ctypes.c_uint64), ("time_budget_s", ctypes.c_double),
                ("seed", ctypes.c_uint64), ("skip_spec_seeds", ctypes.c_int),
                ("transfer_seeds", ctypes.c_void_p), ("ntransfer_seeds", ctypes.c_size_t),
                ("baseline_cfg", ctypes.c_void_p),
                ("objective", ctypes.c_void_p), ("objective_ctx", ctypes.c_void_p),
                ("on_event", ctypes.c_void_p), ("event_ctx", ctypes.c_void_p),
                ("clock", ctypes.c_void_p), ("clock_ctx", ctypes.c_void_p),
                ("predict_fail", ctypes.c_void_p), ("predict_ctx", ctypes.c_void_p)]


class _SessionOpts(ctypes.Structure):  # session.h: muh_session_opts
    _fields_ = [("hw", ctypes.c_char_p), ("instance", ctypes.c_size_t), ("measure", ctypes.c_int),
                ("db", ctypes.c_char_p), ("fresh", ctypes.c_int), ("replay", ctypes.c_char_p),
                ("replay_columns", ctypes.c_void_p), ("jobs", ctypes.c_int), ("search", _StrategyOpts),
                ("no_transfer", ctypes.c_int), ("seeds_from", ctypes.c_void_p), ("nseeds_from", ctypes.c_size_t),
                ("on_note", ctypes.c_void_p), ("note_ctx", ctypes.c_void_p), ("stop", ctypes.c_void_p),
                ("pool", ctypes.c_int), ("baseline", ctypes.c_char_p), ("no_baseline", ctypes.c_int)]


class Error(Exception):
    """A libmuh error: .status (muh_status: 2 input, 3 environment, 4 memory)
    and the message, with file:line:col when it is something the user wrote."""

    def __init__(self, status, diag):
        self.status = status
        msg = diag.msg.decode(errors="replace")
        where = diag.file.decode(errors="replace")
        if where and diag.line:
            msg = f"{where}:{diag.line}:{diag.col}: {msg}"
        elif where:
            msg = f"{where}: {msg}"
        super().__init__(msg)


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
    U32P, D = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(_Diag)
    sig = {
        "session_opts_size": (S, []),
        "session_open": (I, [ctypes.c_char_p, ctypes.POINTER(_SessionOpts), ctypes.POINTER(P), D]),
        "session_start": (I, [P, D]),
        "session_close": (None, [P]),
        "session_space": (P, [P]),
        "session_problem": (ctypes.c_char_p, [P]),
        "session_next": (ctypes.c_long, [P, U32P, S, D]),
        "session_record": (I, [P, U32P, ctypes.c_double, I, D]),
        "session_lookup": (I, [P, U32P, P, D]),
        "session_best": (I, [P, U32P, ctypes.POINTER(ctypes.c_double)]),
        "session_done": (I, [P]),
        "session_pending": (S, [P]),
        "space_nparams": (S, [P]),
        "space_valid": (ctypes.c_uint64, [P]),
        "space_default": (I, [P, U32P]),
        "space_key": (I, [P, U32P, ctypes.c_char_p, S]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    if lib.session_opts_size() != ctypes.sizeof(_SessionOpts):
        raise OSError(f"libmuh's muh_session_opts is {lib.session_opts_size()} bytes, this binding's "
                      f"{ctypes.sizeof(_SessionOpts)}: python/muh.py does not match the library")
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
    """{name: value} of a canonical key "A=1,B=2" (space_key's)."""
    return {k: _value(v) for k, v in (item.split("=", 1) for item in key.split(",") if item)}


class Proposal:
    """One configuration the session proposed: .config {param: value}, .key."""

    def __init__(self, cfg, key):
        self._cfg, self.key, self.config = cfg, key, _config(key)

    def __repr__(self):
        return f"Proposal({self.key})"


class Session:
    """A libmuh session for online tuning (session_open + session_start).

    spec: the spec's path; budget: evaluations (0: the whole space); seed;
    strategy: a name (None: the library's default); db: a store (a rerun
    resumes); hw: a hardware profile; instance: the problem instance.
    """

    def __init__(self, spec, budget=0, seed=0, strategy=None, db=None, hw=None, instance=0, fresh=False):
        self._s = None
        lib = library()
        self._keep = [x.encode() if isinstance(x, str) else x for x in (spec, strategy, db, hw)]
        o = _SessionOpts()
        o.hw = self._keep[3]
        o.instance = instance
        o.db = self._keep[2]
        o.fresh = int(bool(fresh))
        o.search.strategy = self._keep[1]
        o.search.budget = budget
        o.search.seed = seed
        self._s = ctypes.c_void_p()
        d = _Diag()
        rc = lib.session_open(self._keep[0], ctypes.byref(o), ctypes.byref(self._s), ctypes.byref(d))
        if rc == 0:
            rc = lib.session_start(self._s, ctypes.byref(d))
            if rc:
                self.close()
        if rc:
            self._s = None
            raise Error(rc, d)
        sp = lib.session_space(self._s)
        self._np = lib.space_nparams(sp)
        self.valid = lib.space_valid(sp)
        self.problem = lib.session_problem(self._s).decode()

    def _cfg(self):
        return (ctypes.c_uint32 * max(1, self._np))()

    def _key(self, cfg):
        buf = ctypes.create_string_buffer(4096)
        library().space_key(library().session_space(self._s), cfg, buf, len(buf))
        return buf.value.decode()

    def next(self, k=1):
        """Up to k proposals (session_next): [] when the strategy has nothing more now."""
        lib = library()
        cfgs = (ctypes.c_uint32 * (max(1, self._np) * k))()
        d = _Diag()
        n = lib.session_next(self._s, cfgs, k, ctypes.byref(d))
        if n < 0:
            raise Error(-n, d)
        out = []
        for i in range(n):
            cfg = self._cfg()
            ctypes.memmove(cfg, ctypes.byref(cfgs, i * self._np * 4), self._np * 4)
            out.append(Proposal(cfg, self._key(cfg)))
        return out

    def lookup(self, proposal):
        """True when the session answers the proposal itself (session_lookup: told
        already, or a row of the store's run, which a rerun resumes from)."""
        d = _Diag()
        rc = library().session_lookup(self._s, proposal._cfg, None, ctypes.byref(d))
        if rc < 0:
            raise Error(-rc, d)
        return rc == 1

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
        """Tells the session the time the caller measured (session_record); ok=False: it failed."""
        d = _Diag()
        rc = library().session_record(self._s, proposal._cfg, float(seconds) if ok else 0.0, 0 if ok else 1,
                                      ctypes.byref(d))
        if rc:
            raise Error(rc, d)

    def best(self):
        """(config, seconds) of the best recorded so far (session_best), or None."""
        cfg, t = self._cfg(), ctypes.c_double()
        if not library().session_best(self._s, cfg, ctypes.byref(t)):
            return None
        return _config(self._key(cfg)), t.value

    @property
    def done(self):
        return bool(library().session_done(self._s))

    @property
    def pending(self):
        return library().session_pending(self._s)

    def close(self):
        if getattr(self, "_s", None):
            library().session_close(self._s)
            self._s = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
