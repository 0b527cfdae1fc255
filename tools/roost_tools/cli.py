"""What the command-line tools share (roost-analyze, roost-report, roost-reproduce)."""
from __future__ import annotations

import argparse


class Once(argparse.Action):
    """An option given at most once: `--skip 1 --skip 2` ran with the last one without a word, where roost-bench
    and roost-cachesim refuse a repeated flag (an outside-user campaign), and so did roost-report's and
    roost-reproduce's options (another). argparse's usage error, exit status 2."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, "_given_" + self.dest, False):
            parser.error(f"{option_string} is given twice; give it once")
        setattr(namespace, "_given_" + self.dest, True)
        setattr(namespace, self.dest, values)
