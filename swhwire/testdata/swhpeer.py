"""The Python side of swhwire's cross-check: values packed and unpacked the
way swh-core does (use_bin_type, datetime, bin-keyed envelopes, ext 1/2 big
integers), with Debian's msgpack.

  swhpeer.py encode   prints {name: base64 of the packed value} as JSON
  swhpeer.py check    reads that JSON on stdin, unpacks each value, compares
                      it with the expected one, and prints a verdict line
"""
import base64
import datetime
import json
import sys
import uuid

import swhcore
from swhcore import UTC, LastVisitStatus, PagedResult


class Model:
    """A scheduler model: class name and attrs fields."""

    def __init__(self, type_, **fields):
        self.type_, self.fields = type_, fields

    def __eq__(self, other):
        return isinstance(other, Model) and (self.type_, self.fields) == (other.type_, other.fields)

    def __repr__(self):
        return "%s(%r)" % (self.type_, self.fields)


def exception_to_dict(exc):
    import traceback

    return {
        "type": type(exc).__name__,
        "module": type(exc).__module__,
        "args": exc.args,
        "message": str(exc),
        "traceback": traceback.format_exception(None, exc, exc.__traceback__),
    }


def decode_exception(d):
    return {"exception": d["type"], "args": list(d["args"])}


CODEC = swhcore.Codec(
    swhcore.ENCODERS + [
        (Exception, "exception", exception_to_dict),
        (Model, "scheduler_model", lambda m: {**m.fields, "__type__": m.type_}),
        (LastVisitStatus, "last_visit_status", lambda s: s.value),
    ],
    {
        **swhcore.DECODERS,
        "exception": decode_exception,
        "scheduler_model": lambda d: Model(d.pop("__type__"), **d),
        "last_visit_status": LastVisitStatus,
    },
)


LISTER = uuid.UUID("cdd8f804-9db6-40c3-93ab-5955d3836234")
DT = datetime.datetime(2026, 11, 25, 12, 0, 0, 123456, tzinfo=UTC)

# Each value with the name the Go test knows it by.
VALUES = {
    "dt_us": DT,
    "dt_seconds": datetime.datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC),
    "dt_offset": datetime.datetime(2015, 3, 4, 18, 25, 13, 1234, tzinfo=datetime.timezone(datetime.timedelta(hours=1, minutes=58))),
    "dt_past": datetime.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    "dt_future": datetime.datetime(2600, 6, 1, 8, 30, 0, 999999, tzinfo=UTC),
    "dt_min": datetime.datetime(1, 1, 1, tzinfo=UTC),
    "dt_max": datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    "td_64_days": datetime.timedelta(64),
    "td_negative": datetime.timedelta(microseconds=-1),
    "td_mixed": datetime.timedelta(days=-3, seconds=5, microseconds=7),
    "uuid": LISTER,
    "bytes": b"\x00\x01\xff",
    "empty_bytes": b"",
    "text": "été",
    "ints": [0, -1, -33, 255, 65536, 2**63, 2**64 - 1, -(2**63)],
    "big_ints": [2**64, 2**100, -(2**64), -(2**100)],
    "floats": [2.5, -0.0, 1e300],
    "odd_keys": {1: "one", None: "none", b"raw": True},
    "status": LastVisitStatus.not_found,
    "task": Model(
        "Task",
        type="load-git",
        arguments=Model("TaskArguments", args=[], kwargs={"url": "https://github.com/o/r"}),
        next_run=DT,
        status="next_run_not_scheduled",
        policy="recurring",
        retries_left=0,
        id=42,
        current_interval=datetime.timedelta(days=1),
        priority=None,
    ),
    "page": PagedResult(
        results=[
            Model("ListedOrigin", lister_id=LISTER, url="https://github.com/o/r", visit_type="git",
                  extra_loader_arguments={}, last_update=None, is_fork=None, forked_from_url=None,
                  enabled=True, first_seen=DT, last_seen=DT),
        ],
        next_page_token=[str(LISTER), "https://github.com/o/r"],
    ),
    "exception": ValueError("boom", 3),
    "not_envelope_extra_key": {b"swhtype": "uuid", b"d": str(LISTER), b"x": 1},
    "not_envelope_unknown": {b"swhtype": "nope", b"d": 1},
    "not_envelope_str_keys": {"swhtype": "uuid", "d": str(LISTER)},
}

# Values only Python sends: the legacy datetime envelope.
PYTHON_ONLY = {
    "legacy_datetime": {b"swhtype": "datetime", b"d": "2015-01-01T12:04:42.231455"},
    "legacy_datetime_offset": {b"swhtype": "datetime", b"d": "2015-03-04T18:25:13.001234+01:58"},
}


def expected(name):
    v = VALUES[name]
    if isinstance(v, Exception):
        return decode_exception(exception_to_dict(v))
    return v


def main():
    if sys.argv[1] == "encode":
        out = {k: base64.b64encode(CODEC.packb(v)).decode() for k, v in {**VALUES, **PYTHON_ONLY}.items()}
        json.dump(out, sys.stdout)
        return
    got = json.load(sys.stdin)
    bad = []
    for name in VALUES:
        if name not in got:
            bad.append("%s: missing" % name)
            continue
        v = CODEC.unpackb(base64.b64decode(got[name]))
        if v != expected(name) or type(v) is not type(expected(name)):
            bad.append("%s: got %r, want %r" % (name, v, expected(name)))
    for line in bad:
        print(line)
    print("verdict: %s" % ("ok" if not bad else "%d mismatches" % len(bad)))


if __name__ == "__main__":
    main()
