"""Make this interpreter look like Windows to the code imported after it: the names of
`signal`, `os` and `select` that Windows lacks are deleted, and the POSIX-only modules
cannot be imported. A name evaluated at import time (a default argument such as
`sig=signal.SIGKILL`) or used unguarded then fails here as it would on Windows.

tests/project/test_portability.py copies this file as `sitecustomize.py` onto PYTHONPATH, so
every Python started under a test (the engine worker too) runs without those names.
Standard-library and third-party modules that choose their POSIX branch when they are
imported are imported first, and keep full copies of `os`, `signal` and `select`: on
Windows they run their Windows code, which is not DraftDeck's to test. DraftDeck's
modules, imported later, see only what Windows has. Any failure here exits the
interpreter (site.py would only print a warning and go on with the names still there).

Windows' names are those of CPython's `nt` module (typeshed's stdlib/nt.pyi) and the
signals its documentation lists for Windows.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import types

# The signals Windows has (https://docs.python.org/3/library/signal.html).
WINDOWS_SIGNALS = frozenset(
    {"SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM", "SIGBREAK"}
    | {"CTRL_C_EVENT", "CTRL_BREAK_EVENT", "SIG_DFL", "SIG_IGN"}
)
# Functions of `signal` that Windows lacks.
POSIX_SIGNAL_FUNCTIONS = (
    "alarm",
    "pause",
    "setitimer",
    "getitimer",
    "siginterrupt",
    "pthread_kill",
    "pthread_sigmask",
    "sigpending",
    "sigwait",
    "sigwaitinfo",
    "sigtimedwait",
    "pidfd_send_signal",
    "ItimerError",
    "Sigmasks",
)
# The public names of Windows' `nt` module in Python 3.10 and 3.11 (typeshed's
# stdlib/nt.pyi; 3.12 adds get_blocking and set_blocking, 3.13 fchmod and lchmod), which
# `os` re-exports there as it re-exports `posix` here; `os` defines the rest itself.
_NT_NAMES = """
    F_OK O_APPEND O_BINARY O_CREAT O_EXCL O_NOINHERIT O_RANDOM O_RDONLY O_RDWR
    O_SEQUENTIAL O_SHORT_LIVED O_TEMPORARY O_TEXT O_TRUNC O_WRONLY P_DETACH P_NOWAIT
    P_NOWAITO P_OVERLAY P_WAIT R_OK TMP_MAX W_OK X_OK EX_OK DirEntry abort access chdir
    chmod close closerange cpu_count device_encoding dup dup2 environ error execv execve
    fspath fstat fsync ftruncate get_handle_inheritable get_inheritable
    get_terminal_size getcwd getcwdb getlogin getpid getppid isatty kill link listdir
    lseek lstat mkdir open pipe putenv read readlink remove rename replace rmdir scandir
    set_handle_inheritable set_inheritable spawnv spawnve startfile stat stat_result
    statvfs_result strerror symlink system terminal_size times times_result truncate
    umask uname_result unlink unsetenv urandom utime waitpid waitstatus_to_exitcode write
"""
WINDOWS_OS_NAMES = frozenset(_NT_NAMES.split())
# What `os` itself defines only on POSIX.
POSIX_OS_EXTRAS = ("fwalk", "environb", "getenvb")
POSIX_SELECT_NAMES = ("poll", "epoll", "devpoll", "kqueue", "kevent")
POSIX_MODULES = (
    "fcntl",
    "termios",
    "tty",
    "pty",
    "pwd",
    "grp",
    "resource",
    "syslog",
    "posix",
    "_posixsubprocess",
    "_posixshmem",
)
# Imported before the names go: they pick their POSIX or Windows code when imported.
PLATFORM_BRANCHING = (
    "subprocess",
    "selectors",
    "asyncio",
    "shutil",
    "tempfile",
    "socket",
    "platform",
    "uuid",
    "multiprocessing",
    "getpass",
    "pathlib",
    "psutil",
    "platformdirs",
    "numpy",
    "PySide6.QtCore",
    "httpx2",
    "filelock",
    "huggingface_hub",
)


def _keep_full_modules(*originals: types.ModuleType) -> None:
    """Point the modules loaded so far at full copies of `originals`: the standard
    library's POSIX code (subprocess waiting with os.WNOHANG, Popen.kill sending
    SIGKILL) runs its Windows code on Windows, so it must keep its names here."""
    copies = {}
    for original in originals:
        copy = types.ModuleType(original.__name__, original.__doc__)
        copy.__dict__.update(original.__dict__)
        copies[id(original)] = copy
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if namespace is None or module in originals or module.__name__ == __name__:
            continue  # (this module strips the originals)
        for key, value in list(namespace.items()):
            if isinstance(value, types.ModuleType) and id(value) in copies:
                namespace[key] = copies[id(value)]


def strip() -> None:
    import posix
    import select

    for name in PLATFORM_BRANCHING:
        importlib.import_module(name)
    _keep_full_modules(os, signal, select)
    for name in [*dir(signal)]:
        if name.startswith(("SIG", "CTRL_")) and name not in WINDOWS_SIGNALS:
            delattr(signal, name)
    for name in POSIX_SIGNAL_FUNCTIONS:
        if hasattr(signal, name):
            delattr(signal, name)
    posix_names = {name for name in dir(posix) if not name.startswith("_")}
    for name in sorted(posix_names - WINDOWS_OS_NAMES) + list(POSIX_OS_EXTRAS):
        if hasattr(os, name):
            delattr(os, name)
    for name in POSIX_SELECT_NAMES:
        if hasattr(select, name):
            delattr(select, name)
    for name in POSIX_MODULES:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError


if __name__ == "sitecustomize" and os.name == "posix":  # never in the test runner itself
    try:
        strip()
    except BaseException as exc:  # site.py would print a warning and carry on
        print(f"posix_free: could not strip POSIX names: {exc!r}", file=sys.stderr, flush=True)
        os._exit(97)
