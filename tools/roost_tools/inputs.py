"""Reading an input file the user named: one clear line for a directory, a pipe or an unreadable file, never a
traceback or a wait."""
from pathlib import Path


def read_input(path: Path, error: type[Exception], directory: str) -> bytes:
    """The bytes of `path`; `error` names it when it is a directory (`directory`: what to give instead, after
    "a directory") or cannot be read."""
    if path.is_dir():
        raise error(f"{path}: a directory{directory}")
    if path.exists() and not path.is_file():  # a named pipe's read waits for a writer that may never come
        raise error(f"{path}: not a regular file (a named pipe, a device or a socket); give a file that holds "
                    f"the data whole")
    try:
        return path.read_bytes()
    except OSError as e:
        raise error(f"{path}: cannot read it: {e.strerror or e}") from None
