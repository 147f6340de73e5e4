"""Software Heritage's simulator origin model, written from its description,
for revisit's world tests: one JSON line per URL given on stdin, at the time
given as POSIX seconds in argv[1]."""
import datetime
import hashlib
import json
import math
import sys

EPOCH = datetime.datetime(2015, 9, 1, tzinfo=datetime.timezone.utc)
TEN_YEARS = 10 * 365 * 86400

now = datetime.datetime.fromtimestamp(float(sys.argv[1]), tz=datetime.timezone.utc)
for line in sys.stdin:
    url = line.strip()
    b = int.from_bytes(hashlib.md5(url.encode()).digest()[:2], "little")
    interval = TEN_YEARS ** (b / 65536)
    elapsed = (now - EPOCH).total_seconds()
    last_update = now - datetime.timedelta(seconds=elapsed % interval)
    k = elapsed // interval
    snapshot = hashlib.sha1(f"git {url} {k}".encode()).hexdigest()
    previous = now - datetime.timedelta(days=365)
    commits = (now - previous).total_seconds() // interval
    run_time = 0.5 + 0.1 * commits
    print(json.dumps({"url": url, "interval": interval, "last_update": last_update.timestamp(),
                      "snapshot": snapshot, "run_time": run_time}))
