"""What every module of the side-by-side comparison shares: the steps and engines it knows,
its exceptions (they decide the exit status), and its log."""

import os
import re
import sys
import time

# The repository's root (tools/sidebyside/common.py -> ../..): bin/dbperf's default place
# and dbperf's working directory.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The Insert Benchmark's steps this script compares, in the order of the spec (reference
# §1.9); cleanup is not compared (neither client does much in it).
KNOWN_STEPS = ["l.i0", "l.x", "l.i1", "l.i2",
               "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"]
RW_STEP = re.compile(r"^q([rp])(\d+)$")
INSERT_STEPS = ("l.i0", "l.i1", "l.i2")

# --engines name -> (dbperf engine, MariaDB storage engine, iibench --dbms, Python module)
ENGINES = {
    "postgres": ("postgres", None, "postgres", "psycopg2"),
    "innodb": ("mariadb", "innodb", "mysql", "MySQLdb"),
    "rocksdb": ("mariadb", "rocksdb", "mysql", "MySQLdb"),
}

# The query floor's messages (bytes): the header the echo server needs, and a short reply.
QUERY_REQ_BYTES = 16
QUERY_REP_BYTES = 8


class BadInput(Exception):
    """Bad input or a missing prerequisite: one line, exit 2."""


class EngineFailed(Exception):
    """This engine cannot be measured further; the others still run."""


class Interrupted(BaseException):
    pass


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, file=sys.stderr, flush=True)


def delta(x0, x1):
    return None if x0 is None or x1 is None else x1 - x0
