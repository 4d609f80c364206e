# SPDX-License-Identifier: MIT
"""The exact peak memory of a process tree, measured in the kernel.

    with peakbpf.measure() as m:
        work()
    print(m.growth_bytes, m.source, m.exact)

measure() measures the calling process and every descendant during the
block (subprocess, multiprocessing with any start method, native threads;
native code holding the GIL too: the kernel does the work). The BPF
programs are loaded once per process, at the first block, and every block
after reuses them: a block is two window cuts (see docs/python.md for the cost).
Blocks nest, and blocks in several threads may overlap: a block's figure
folds every window cut while it was open, so its peak is the largest over
its span. measure(pid=N) measures process N and its descendants instead
(a session, and a BPF load, of its own per block).

measure(timeline="out.html") also records the tree's memory over time and
writes it when the block ends, in the format the extension names (.html,
.svg, .json for ui.perfetto.dev, .csv): a session of its own too, polled
from a thread every 20 ms; m.mark("label") marks a phase in it.

It never raises for a measurement problem: without privileges it falls
back to a labelled, inexact source, and when nothing can be measured the
figure's source is "unavailable" and `inexact_reason` says why; that
includes a missing libpeakbpf (the reason names where it looked and the
fix). session_info(), which describes the library's session, raises
LibraryError then.
"""
import atexit as _atexit
import functools as _functools
import os as _os
import threading as _threading
import time as _time

from . import _lib
from ._units import format_bytes, parse_size

__all__ = ["measure", "Measurement", "parse_size", "format_bytes", "session_info", "LibraryError"]
__version__ = "0.4.0"

_TIMELINE_POLL_S = 0.02  # the kernel's buffer holds ~175 k changes between polls


class LibraryError(OSError):
    """libpeakbpf could not be loaded: nothing can be measured until it is
    installed (make install) or $PEAKBPF_LIBRARY names it."""


def _need_library():
    why = _lib.load_error()
    if why is not None:
        raise LibraryError(why)

_lock = _threading.RLock()
_session = None         # this process's session over itself, opened at first use
_open = []              # blocks open on it, outermost first
_loads = 0              # sessions opened in this process (one per process for self)


def _forget_after_fork():
    # The child inherits the parent's session object, not the right to use
    # it: the child measures itself with a session of its own.
    global _session, _open, _lock, _loads
    _session, _open, _lock, _loads = None, [], _threading.RLock(), 0


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_forget_after_fork)


def _self_session():
    global _session, _loads
    if _session is None:
        _session = _lib.Session()
        _loads += 1
    return _session


@_atexit.register
def _close_at_exit():
    if _session is not None:
        _session.close()


def session_info():
    """This process's session: its source, why it fell back, and how many
    times a session was opened in this process (1 once loaded)."""
    _need_library()
    with _lock:
        s = _self_session()
        return {"source": s.source, "error": s.error, "notes": list(s.notes), "loads": _loads}


class Measurement:
    """One measured block; its figure once the block has ended.

    Attributes (None when not measured, never 0 for "unknown"):
    peak_bytes, baseline_bytes, growth_bytes, exact, error_bound_bytes,
    source, scope, inexact_reason, holders, breakdown, other_sources, windows,
    windows_not_measured (the numbers, from 1, of the windows without a
    figure: the peak may lie in one of them, so no limit passes such a
    figure), duration_s; with timeline=PATH, timeline (PATH once written, else None)
    and timeline_error (why not), timeline_drops (changes lost: 0 when the
    timeline has every one).
    """

    def __init__(self, pid=None, callback=None, timeline=None, measure="rss", cgroup=None):
        if measure not in _lib.MEASURES:
            raise ValueError("measure=%r: use \"rss\" (summed RSS) or \"unique\" (each page once)"
                             % (measure,))
        self.pid = pid
        self.cgroup = _os.fspath(cgroup) if cgroup is not None else None
        self.callback = callback
        self.timeline_path = _os.fspath(timeline) if timeline is not None else None
        self.measure = measure
        self._reset()

    def _reset(self):
        self.source = "unavailable"
        self.scope = None               # what the figure covers (names the helper when via one)
        self.exact = False
        self.error_bound_bytes = None
        self.inexact_reason = None
        self.peak_bytes = None
        self.baseline_bytes = None
        self.growth_bytes = None
        self.peak_time = None           # _time.monotonic() of the peak, when known
        self.holders = []
        self.breakdown = None
        self.other_sources = []
        self.not_used = []
        self.windows = 0
        self.windows_not_measured = []
        self._lost_why = None
        self.duration_s = None
        self._state = "new"
        self._first_of_session = False
        self._own = None                # measure(pid=) or timeline=: its own session
        self._started = None
        self.timeline = None
        self.timeline_error = None
        self.timeline_drops = None
        self._poller = None
        self._stop = None

    # -- folding the windows the block spans --------------------------------
    def _fold(self, w):
        if w is None:
            return
        self.windows += 1
        first = self.windows == 1
        measured = w.get("peak_bytes") is not None
        if not measured:
            self.windows_not_measured.append(self.windows)
            self._lost_why = self._lost_why or w.get("inexact_reason")
        if first:
            self.source = w.get("source") or "unavailable"
            self.scope = w.get("scope")
            self.baseline_bytes = w.get("baseline_bytes") if measured else None
            self.exact = bool(w.get("exact")) and measured
            self.error_bound_bytes = w.get("error_bound_bytes") if measured else None
            self.inexact_reason = w.get("inexact_reason")
            self.not_used = list(w.get("not_used") or [])
        else:
            self._fold_judgement(w, measured)
        if measured and (self.peak_bytes is None or w["peak_bytes"] > self.peak_bytes):
            self.peak_bytes = w["peak_bytes"]
            self.holders = [self._holder(h) for h in w.get("processes") or []]
            self.breakdown = w.get("breakdown_at_peak")
            ns = w.get("peak_mono_ns")
            self.peak_time = ns / 1e9 if ns is not None else None
            self.other_sources = list(w.get("other_sources") or [])

    def _holder(self, h):
        """A holder at the peak. Its own_peak_bytes is its largest RSS since
        the session began tracking it; this process's session outlives
        blocks, so in a block that did not open it that figure may belong to
        an earlier block: it is then own_peak_since_load_bytes, and
        own_peak_bytes is None (not known for this block)."""
        h = dict(h)
        if self._own is None and not self._first_of_session:
            h["own_peak_since_load_bytes"] = h.get("own_peak_bytes")
            h["own_peak_bytes"] = None
        return h

    def _fold_judgement(self, w, measured):
        if not measured:
            self.exact = False
            self.error_bound_bytes = None
            self.inexact_reason = self.inexact_reason or w.get("inexact_reason")
            return
        if self.exact and not w.get("exact"):
            self.inexact_reason = w.get("inexact_reason")
        self.exact = self.exact and bool(w.get("exact"))
        b = w.get("error_bound_bytes")
        if self.error_bound_bytes is not None:
            self.error_bound_bytes = None if b is None else max(self.error_bound_bytes, b)

    def _finish(self):
        if self.peak_bytes is not None and self.windows_not_measured:
            # Measured in some windows only: not exact, and says which.
            self.exact = False
            self.error_bound_bytes = None
            self.inexact_reason = "window%s %s of %d not measured (%s): the peak is the other windows' only" % (
                "s" if len(self.windows_not_measured) > 1 else "",
                ", ".join(str(n) for n in self.windows_not_measured), self.windows, self._lost_why)
        if self.peak_bytes is not None and self.baseline_bytes is not None:
            self.growth_bytes = max(0, self.peak_bytes - self.baseline_bytes)
        if self.peak_bytes is None:
            self.exact = False
            self.error_bound_bytes = None
        self.duration_s = _time.monotonic() - self._started

    def _unavailable(self, why):
        self.source = "unavailable"
        self.inexact_reason = why

    # -- the block -----------------------------------------------------------
    def __enter__(self):
        if self._state != "new":
            raise RuntimeError("a Measurement measures one block: call measure() again")
        self._state = "open"
        self._started = _time.monotonic()
        why = _lib.load_error()
        if why is not None:
            # An installation problem, still not an exception: the block
            # runs, unmeasured, and says why.
            self._nolib = True
            self._unavailable(why)
            return self
        if self.measure != "rss":
            # The library attaches: no cgroup of the tree's own, so it says
            # why it cannot, and the block is not measured.
            self._unavailable(_lib.refusal(self.measure))
            return self
        if self.pid is not None or self.timeline_path is not None or self.cgroup is not None:
            self._own = _lib.Session(self.pid, timeline=self.timeline_path is not None,
                                     cgroup=self.cgroup)
            if self._own.error:
                self._unavailable(self._own.error)
            elif self.timeline_path is not None:
                self._start_polling()
            return self
        with _lock:
            self._first_of_session = _session is None
            s = _self_session()
            if s.error:
                self._unavailable(s.error)
                return self
            w = s.close_window(want=bool(_open))     # the cut where this block begins
            for b in _open:
                b._fold(w)
            _open.append(self)
        return self

    def __exit__(self, *exc):
        if self._state != "open":
            return False
        self._state = "closed"
        if getattr(self, "_nolib", False):
            pass
        elif self._own is not None:
            self._stop_polling()
            self._fold(self._own.close_window())
            if self.timeline_path is not None:
                self._write_timeline()
            self._own.close()
        else:
            with _lock:
                s = _self_session()
                if self in _open and not s.error:
                    w = s.close_window()
                    for b in _open:
                        b._fold(w)
                    _open.remove(self)
        self._finish()
        if self.callback is not None:
            self.callback(self)
        return False

    # -- the timeline ------------------------------------------------------------
    def _start_polling(self):
        if self._own.poll() != 0:
            self.timeline_error = ("the timeline needs the bpf source (this session uses %s)"
                                   % self._own.source)
            return
        self._stop = _threading.Event()

        def poll(own=self._own, stop=self._stop):
            while not stop.wait(_TIMELINE_POLL_S):
                own.poll()
        self._poller = _threading.Thread(target=poll, name="peakbpf-timeline", daemon=True)
        self._poller.start()

    def _stop_polling(self):
        if self._poller is not None:
            self._stop.set()
            self._poller.join()
            self._poller = None

    def _write_timeline(self):
        if self.timeline_error or self._own.error:
            self.timeline_error = self.timeline_error or self._own.error
            return
        err = self._own.write_timeline(self.timeline_path)
        if err:
            self.timeline_error = "cannot write %s: %s" % (self.timeline_path, _os.strerror(-err))
            return
        self.timeline = self.timeline_path
        self.timeline_drops = self._own.timeline_drops()

    def mark(self, label):
        """Mark a phase on the timeline now (measure(timeline=...) only):
        True when marked."""
        if self._state != "open" or self._own is None or self._poller is None:
            return False
        return self._own.mark(label) == 0

    # -- a decorator -----------------------------------------------------------
    def __call__(self, fn):
        """@peakbpf.measure(): each call is measured; the last Measurement is
        the wrapper's .last_measurement (and goes to callback, if given)."""
        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            m = Measurement(self.pid, self.callback, self.timeline_path, self.measure)
            wrapper.last_measurement = m
            with m:
                return fn(*args, **kwargs)
        wrapper.last_measurement = None
        return wrapper

    # -- what it measured --------------------------------------------------------
    def describe(self):
        """'612.0 MiB (bpf, exact)', '... ± 1.2 MiB (bpf, not exact: why)', ..."""
        if self.growth_bytes is None:
            return "not measured (%s: %s)" % (self.source, self.inexact_reason)
        return "%s %s" % (format_bytes(self.growth_bytes), self.judgement())

    def judgement(self):
        """'(bpf, exact)', '(proc, not exact, error unknown: why)', ..."""
        if self.exact:
            return "(%s, exact)" % self.source
        if self.error_bound_bytes is not None:
            return "(%s, not exact, ± %s: %s)" % (self.source, format_bytes(self.error_bound_bytes),
                                                 self.inexact_reason)
        return "(%s, not exact, error unknown: %s)" % (self.source, self.inexact_reason)

    def to_dict(self):
        return {
            "source": self.source,
            "exact": self.exact,
            "error_bound_bytes": self.error_bound_bytes,
            "inexact_reason": self.inexact_reason,
            "scope": self.scope,
            "peak_bytes": self.peak_bytes,
            "baseline_bytes": self.baseline_bytes,
            "growth_bytes": self.growth_bytes,
            "breakdown_at_peak": self.breakdown,
            "holders": self.holders,
            "other_sources": self.other_sources,
            "not_used": self.not_used,
            "peak_after_s": (self.peak_time - self._started
                             if self.peak_time is not None and self._started is not None else None),
            "windows": self.windows,
            "windows_not_measured": self.windows_not_measured,
            "duration_s": self.duration_s,
            "pid": self.pid if self.pid is not None else _os.getpid(),
            "timeline": self.timeline,
            "timeline_error": self.timeline_error,
        }

    def __repr__(self):
        if self._state != "closed":
            return "<peakbpf.Measurement %s>" % self._state
        if self.peak_bytes is None:
            return "<peakbpf.Measurement %s>" % self.describe()
        return "<peakbpf.Measurement growth %s, peak %s %s>" % (
            format_bytes(self.growth_bytes), format_bytes(self.peak_bytes), self.judgement())


def measure(pid=None, callback=None, timeline=None, measure="rss", cgroup=None):
    """A Measurement: a context manager (`with measure() as m`) or a
    decorator (`@measure()`). pid=None: this process and its descendants.
    timeline="out.html" (.svg, .json, .csv): write the tree's memory over
    time there when the block ends (bpf only; timeline_error says why not).
    measure="unique" (each page once) needs the tree in a cgroup of its own,
    which only the CLI's command mode makes: here the block is not measured
    and inexact_reason says so. cgroup=PATH measures a cgroup instead (v2, or
    v1's memory hierarchy): every process in it and below, those inside when
    the block begins and those that enter during it (peakbpf_add_cgroup)."""
    return Measurement(pid, callback, timeline, measure, cgroup)
