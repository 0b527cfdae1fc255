"""Reading an input file the user named: one clear line for a directory, a pipe or an unreadable file, never a
traceback or a wait."""
from pathlib import Path


def _open_pipe(path: Path) -> bool:
    """A pipe the process already holds (the shell's <(command), /dev/stdin): its writer exists."""
    return path.is_fifo() and (str(path) == "/dev/stdin" or str(path).startswith(("/dev/fd/", "/proc/self/fd/")))


def read_input(path: Path, error: type[Exception], directory: str) -> bytes:
    """The bytes of `path`; `error` names it when it is a directory (`directory`: what to give instead, after
    "a directory") or cannot be read."""
    if path.is_dir():
        raise error(f"{path}: a directory{directory}")
    if path.exists() and not path.is_file() and not _open_pipe(path):  # a named pipe's read waits for a writer
        raise error(f"{path}: not a regular file (a named pipe, a device or a socket); give a file that holds "
                    f"the data whole (or a pipe this process was given: /dev/stdin, <(command))")
    try:
        return path.read_bytes()
    except OSError as e:
        raise error(f"{path}: cannot read it: {e.strerror or e}") from None
