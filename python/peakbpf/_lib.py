# SPDX-License-Identifier: MIT
"""libpeakbpf through ctypes: finding the library, and one session of it.

The library is looked for, in order, at $PEAKBPF_LIBRARY (a path: the build
tree's .output/libpeakbpf.so.0), where `make install` put it (_config.py),
and under its soname through the dynamic loader.
"""
import ctypes
import errno
import json
import os
import threading

ENV_LIBRARY = "PEAKBPF_LIBRARY"
SONAME = "libpeakbpf.so.0"

SOURCE_AUTO = 0
MEASURES = ("rss", "unique")    # enum peakbpf_measure, in order


class _Opts(ctypes.Structure):
    """struct peakbpf_opts (include/peakbpf/peakbpf.h): sz says how much of
    it this binding knows; the library takes the rest as zero."""
    _fields_ = [("sz", ctypes.c_size_t), ("source", ctypes.c_int),
                ("max_tracked", ctypes.c_uint32), ("sample_interval_ns", ctypes.c_uint64),
                ("cgroup_root", ctypes.c_char_p), ("libbpf_log", ctypes.c_bool),
                ("timeline", ctypes.c_bool), ("measure", ctypes.c_int)]


class _Holder(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_int32), ("comm", ctypes.c_char * 16),
                ("bytes", ctypes.c_uint64), ("own_peak_bytes", ctypes.c_uint64)]


def _candidates():
    env = os.environ.get(ENV_LIBRARY)
    if env:
        return [env]
    found = []
    try:
        from . import _config
        found.append(_config.LIBRARY)
    except ImportError:
        pass
    found.append(SONAME)
    return found


def _declare(lib):
    p, u64p, vp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p
    sigs = {
        "peakbpf_version": (ctypes.c_char_p, []),
        "peakbpf_open": (ctypes.c_int, [p, ctypes.POINTER(vp), ctypes.c_char_p, ctypes.c_size_t]),
        "peakbpf_add_pid": (ctypes.c_int, [vp, ctypes.c_int]),
        "peakbpf_add_self": (ctypes.c_int, [vp]),
        "peakbpf_add_cgroup": (ctypes.c_int, [vp, ctypes.c_char_p]),
        "peakbpf_start": (ctypes.c_int, [vp]),
        "peakbpf_close_window": (ctypes.c_int, [vp, ctypes.POINTER(vp)]),
        "peakbpf_session_source": (ctypes.c_char_p, [vp]),
        "peakbpf_note": (ctypes.c_char_p, [vp, ctypes.c_size_t]),
        "peakbpf_close": (None, [vp]),
        "peakbpf_figure_peak_time": (ctypes.c_int, [vp, u64p]),
        "peakbpf_figure_holder_count": (ctypes.c_size_t, [vp]),
        "peakbpf_figure_holder": (ctypes.c_int, [vp, ctypes.c_size_t, ctypes.POINTER(_Holder)]),
        "peakbpf_figure_json": (ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_size_t]),
        "peakbpf_figure_free": (None, [vp]),
        "peakbpf_timeline_poll": (ctypes.c_int, [vp]),
        "peakbpf_timeline_mark": (ctypes.c_int, [vp, ctypes.c_char_p]),
        "peakbpf_timeline_write": (ctypes.c_int, [vp, ctypes.c_char_p]),
        "peakbpf_timeline_drops": (ctypes.c_int, [vp, u64p]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


_LIB = None
_LIB_ERROR = None


def library():
    """The loaded library, or None and the reason (load_error())."""
    global _LIB, _LIB_ERROR
    if _LIB is None and _LIB_ERROR is None:
        tried = []
        for name in _candidates():
            try:
                _LIB = _declare(ctypes.CDLL(name))
                break
            except (OSError, AttributeError) as e:
                tried.append(str(e))
        if _LIB is None:
            _LIB_ERROR = ("cannot load libpeakbpf (%s): run `make install`, or set %s to the "
                          "path of libpeakbpf.so.0" % ("; ".join(tried), ENV_LIBRARY))
    return _LIB


def load_error():
    library()
    return _LIB_ERROR


def refusal(measure):
    """Why the library cannot measure `measure` ("rss" or "unique"), in its
    own words; None when it can (a session is opened and closed to ask)."""
    lib = library()
    if lib is None:
        return _LIB_ERROR
    opts = _Opts(sz=ctypes.sizeof(_Opts), measure=MEASURES.index(measure))
    h = ctypes.c_void_p()
    why = ctypes.create_string_buffer(256)
    err = lib.peakbpf_open(ctypes.byref(opts), ctypes.byref(h), why, len(why))
    if not err:
        lib.peakbpf_close(h)
        return None
    return why.value.decode() or os.strerror(-err)


class Session:
    """One libpeakbpf session measuring a tree; windows are closed on it.

    Never raises for a measurement problem: when it cannot open, `error`
    says why and every window is None.
    """

    def __init__(self, pid=None, timeline=False, cgroup=None):
        self.handle = None
        # The timeline's calls come from a polling thread and the caller's:
        # a session is not locked (peakbpf.h), so they take turns here.
        self._tl_lock = threading.Lock()
        self.error = None
        self.source = "unavailable"
        self.notes = []
        self.owner = os.getpid()
        lib = library()
        if lib is None:
            self.error = _LIB_ERROR
            return
        self.lib = lib
        h = ctypes.c_void_p()
        why = ctypes.create_string_buffer(256)
        opts = None
        if timeline:
            opts = _Opts(sz=ctypes.sizeof(_Opts), source=SOURCE_AUTO, timeline=True)
            opts = ctypes.byref(opts)
        err = lib.peakbpf_open(opts, ctypes.byref(h), why, len(why))
        if err:
            self.error = why.value.decode() or os.strerror(-err)
            return
        if cgroup is not None:
            # A cgroup target: its processes and its descendants' (peakbpf.h).
            err = lib.peakbpf_add_cgroup(h, os.fsencode(cgroup))
        else:
            err = lib.peakbpf_add_self(h) if pid is None else lib.peakbpf_add_pid(h, int(pid))
        if not err:
            err = lib.peakbpf_start(h)
        if err:
            what = ("cgroup %s" % cgroup if cgroup is not None else
                    "this process" if pid is None else "process %d" % pid)
            hint = (": check the PID" if err == -errno.ESRCH else
                    ": a kernel thread or a zombie has no address space to measure"
                    if err == -errno.EINVAL and pid is not None else "")
            self.error = "cannot measure %s: %s%s" % (what, os.strerror(-err), hint)
            lib.peakbpf_close(h)
            return
        self.handle = h
        self.source = lib.peakbpf_session_source(h).decode()
        i = 0
        while True:
            n = lib.peakbpf_note(h, i)
            if n is None:
                break
            self.notes.append(n.decode())
            i += 1

    def close_window(self, want=True):
        """Close the open window; its figure as a dict (None when not wanted or
        it cannot be read)."""
        if self.handle is None:
            return None
        fig = ctypes.c_void_p()
        err = self.lib.peakbpf_close_window(self.handle, ctypes.byref(fig))
        if err:
            return {"source": "unavailable", "exact": False, "peak_bytes": None,
                    "inexact_reason": "closing the window failed: " + os.strerror(-err)}
        try:
            return self._figure(fig) if want else None
        finally:
            self.lib.peakbpf_figure_free(fig)

    def _figure(self, fig):
        buf = ctypes.create_string_buffer(16384)
        n = self.lib.peakbpf_figure_json(fig, buf, len(buf))
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            n = self.lib.peakbpf_figure_json(fig, buf, len(buf))
        d = json.loads(buf.value.decode("utf-8", "replace"))
        t = ctypes.c_uint64()
        if self.lib.peakbpf_figure_peak_time(fig, ctypes.byref(t)) == 0:
            d["peak_mono_ns"] = t.value
        return d

    # -- the timeline (a session opened with timeline=True, bpf only) --------
    def poll(self):
        """Take the changes recorded since the last call: 0 or a negative errno."""
        if self.handle is None:
            return -errno.ENODATA
        with self._tl_lock:
            return self.lib.peakbpf_timeline_poll(self.handle)

    def mark(self, label):
        if self.handle is None:
            return -errno.ENODATA
        with self._tl_lock:
            return self.lib.peakbpf_timeline_mark(self.handle, str(label).encode("utf-8", "replace"))

    def write_timeline(self, path):
        """Write the timeline so far (.json, .csv, .svg, .html): 0 or a
        negative errno."""
        if self.handle is None:
            return -errno.ENODATA
        with self._tl_lock:
            return self.lib.peakbpf_timeline_write(self.handle, os.fsencode(path))

    def timeline_drops(self):
        n = ctypes.c_uint64()
        if self.handle is None or self.lib.peakbpf_timeline_drops(self.handle, ctypes.byref(n)):
            return None
        return n.value

    def close(self):
        if self.handle is not None and os.getpid() == self.owner:
            self.lib.peakbpf_close(self.handle)
        self.handle = None
