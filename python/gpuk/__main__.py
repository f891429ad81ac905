"""`python -m gpuk` and the `gpuk` console script: the gpuk command line that ships inside the
package (bin/gpuk), with its arguments, output and exit status, from any directory.

    python -m gpuk list
    gpuk run configs/argmax.yaml --json report.json
"""
from __future__ import annotations

import os
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Replaces the process with bin/gpuk (exec: its signals, terminal and exit status are the
    caller's); returns only when the executable cannot be started."""
    from ._cli import executable
    from ._gpuk import Error

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        exe = os.fspath(executable())
    except Error as e:
        print(f"gpuk: {e}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(exe, ["gpuk", *args])
    except OSError as e:
        print(f"gpuk: cannot start {exe}: {e.strerror}", file=sys.stderr)
        return 1
    return 1  # not reached: execv does not return


if __name__ == "__main__":
    sys.exit(main())
