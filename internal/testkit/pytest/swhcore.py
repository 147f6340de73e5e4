"""swh-core's msgpack conventions, for the Python side of revisit's tests.

Values are packed with use_bin_type and datetime (str as str, bytes as bin,
aware datetimes as the timestamp extension), integers beyond 64 bits as ext 1
(positive) and 2 (negative, magnitude) in big-endian, and other values in an
envelope {b"swhtype": name, b"d": payload} whose two keys are bin. Bodies are
unpacked with raw=False, strict_map_key=False and timestamp=3 (UTC datetimes),
and a map is an envelope only when its key set is exactly {b"d", b"swhtype"}
and its swhtype is known.

A Codec takes the envelope encoders and decoders of its user: swhcore only
has those of swh-core itself (uuid, timedelta, paged_result, the legacy
datetime), each script adds the scheduler's.
"""
import dataclasses
import datetime
import enum
import uuid

import msgpack

UTC = datetime.timezone.utc


@dataclasses.dataclass
class PagedResult:
    """swh-core's PagedResult: a page of results and the next page's token."""

    results: list = dataclasses.field(default_factory=list)
    next_page_token: object = None
    total_results: object = None


class LastVisitStatus(enum.Enum):
    """swh-scheduler's LastVisitStatus."""

    successful = "successful"
    failed = "failed"
    not_found = "not_found"


def timedelta_payload(td):
    return {"days": td.days, "seconds": td.seconds, "microseconds": td.microseconds}


# swh-core's own envelopes, in the order its encoder tries them.
ENCODERS = [
    (uuid.UUID, "uuid", str),
    (datetime.timedelta, "timedelta", timedelta_payload),
    (PagedResult, "paged_result", dataclasses.asdict),
]

DECODERS = {
    "uuid": uuid.UUID,
    "timedelta": lambda d: datetime.timedelta(**d),
    "paged_result": lambda d: PagedResult(**d),
    "datetime": datetime.datetime.fromisoformat,
}


def ext_hook(code, data):
    if code == 1:
        return int.from_bytes(data, "big")
    if code == 2:
        return -int.from_bytes(data, "big")
    raise ValueError("unknown ext code %s" % code)


class Codec:
    """Packs and unpacks with encoders [(type, swhtype, payload function)],
    tried in order, and decoders {swhtype: function of the payload}."""

    def __init__(self, encoders, decoders):
        self.encoders, self.decoders = encoders, decoders

    def packb(self, value):
        return msgpack.packb(value, use_bin_type=True, datetime=True, default=self._encode)

    def unpackb(self, body):
        return msgpack.unpackb(body, raw=False, timestamp=3, strict_map_key=False,
                               object_hook=self._decode, ext_hook=ext_hook)

    def _encode(self, obj):
        if isinstance(obj, int):
            code, magnitude = (1, obj) if obj > 0 else (2, -obj)
            return msgpack.ExtType(code, magnitude.to_bytes((magnitude.bit_length() + 7) // 8, "big"))
        for type_, name, payload in self.encoders:
            if isinstance(obj, type_):
                return {b"swhtype": name, b"d": payload(obj)}
        raise TypeError("cannot pack a %s" % type(obj).__name__)

    def _decode(self, obj):
        if set(obj) == {b"d", b"swhtype"} and obj[b"swhtype"] in self.decoders:
            return self.decoders[obj[b"swhtype"]](obj[b"d"])
        return obj
