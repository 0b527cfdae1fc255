"""Reading an input file the user named: one clear line for a directory or an unreadable file, never a traceback."""
from pathlib import Path


def read_input(path: Path, error: type[Exception], directory: str) -> bytes:
    """The bytes of `path`; `error` names it when it is a directory (`directory`: what to give instead, after
    "a directory") or cannot be read."""
    if path.is_dir():
        raise error(f"{path}: a directory{directory}")
    try:
        return path.read_bytes()
    except OSError as e:
        raise error(f"{path}: cannot read it: {e.strerror or e}") from None
