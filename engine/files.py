# SPDX-License-Identifier: MIT
"""The files a user names: read only when they are regular files, and never without end.

A device (``/dev/zero``), a named pipe or a folder given where a file is expected would make a
reader wait for ever or fill the memory; so would a file far larger than any of its kind. Both
are refused before reading, with an :class:`OSError` that names the file, which every command
already reports as ``bgboard: error: FILE: why``.

>>> read_limited("/dev/zero", 1024, "a match file")
Traceback (most recent call last):
...
OSError: [Errno 22] not a regular file (a device, a pipe or a folder), so not a match file: '/dev/zero'
"""

from __future__ import annotations

import errno
import os
import stat
from os import PathLike

#: The most a file of each kind may hold, in bytes: far above any real one (the largest
#: tournament .mat files are a few megabytes; a profile with its looks under one).
MAX_MATCH_FILE = 64 * 1024 * 1024
MAX_SETTINGS_FILE = 4 * 1024 * 1024
MAX_PROFILE = 32 * 1024 * 1024


def regular_file_problem(path: str | PathLike[str]) -> str | None:
    """Why the existing ``path`` is no regular file (following links), or ``None``."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_limited(path: str | PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of the regular file at ``path``, refused if it holds more than ``limit``.

    :param what: what the file should be, for the message (``"a match file"``).
    :raises OSError: not a regular file (``EINVAL``), larger than ``limit`` (``EFBIG``), or
        unreadable; with the file's name.
    """
    name = os.fspath(path)
    info = os.stat(name)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, f"not a regular file (a device, a pipe or a folder), so not {what}", name)
    too_big = OSError(errno.EFBIG, f"larger than {what} can be ({limit // (1024 * 1024)} MB at most)", name)
    if info.st_size > limit:
        raise too_big
    with open(name, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise too_big
    return data
