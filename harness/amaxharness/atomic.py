"""Atomic file output: write to a temporary file in the same folder, then rename over the target.

A reader (or a sweep that was interrupted) sees either the old file or the complete new one,
never a torn write. The rename is atomic because source and target share a file system.
"""

import contextlib
import os
import pathlib
import tempfile


@contextlib.contextmanager
def atomic_path(target):
    """Yields a temporary path next to `target`; on success it is renamed onto `target`.

    The temporary name keeps the target's suffix so that tools that infer a format from the
    extension (matplotlib's savefig) still do. On error the temporary file is removed.
    """
    target = pathlib.Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{target.suffix}",
                               dir=target.parent)
    os.close(fd)
    os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide results from other users
    try:
        yield pathlib.Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes(target, data: bytes):
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())


def write_text(target, text: str):
    write_bytes(target, text.encode("utf-8"))
