"""Shared fixtures of the tools' tests."""
import signal

import pytest


@pytest.fixture
def hang_bound():
    """Makes a test that would hang on a regression (a read of a pipe, a walk round a loop) fail instead: a
    TimeoutError after 30 s, which no passing run comes near."""
    def fail(*_):
        raise TimeoutError("still running after 30 s: a hang")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)
