"""Produce journal messages into Kafka as swh.journal's writer encodes them.

Usage: produce.py BOOTSTRAP TOPIC [SETTINGS] < statuses.jsonl

SETTINGS is a JSON object of more librdkafka settings (security.protocol,
sasl.username, ssl.ca.location…), or null.

Each input line is {"origin", "visit", "date" (ISO 8601 with zone),
"status", "snapshot" (hex or null), "type" (or null)}, with optionally
"partition" (else librdkafka's partitioner hashes the key), "legacy_date"
(the date as the old {b"swhtype": "datetime", b"d": iso} envelope), or
"raw_hex" (the value's bytes as given: a malformed message) and "tombstone"
(no value). Keys are the sorted map of str origin, visit and date.
"""
import datetime
import json
import sys

import msgpack
from confluent_kafka import Producer


def key_bytes(s, date):
    items = {"origin": s["origin"], "visit": str(s["visit"]), "date": str(date)}
    return msgpack.Packer(use_bin_type=True).pack_map_pairs(sorted(items.items()))


def value_bytes(s, date):
    if "raw_hex" in s:
        return bytes.fromhex(s["raw_hex"])
    if s.get("tombstone"):
        return None
    when = {b"swhtype": "datetime", b"d": date.isoformat()} if s.get("legacy_date") else date
    snapshot = bytes.fromhex(s["snapshot"]) if s.get("snapshot") else None
    value = {"origin": s["origin"], "visit": s["visit"], "date": when, "status": s["status"],
             "snapshot": snapshot, "type": s.get("type"), "metadata": None}
    return msgpack.packb(value, use_bin_type=True, datetime=True)


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    settings = {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5}
    if len(sys.argv) > 3:
        settings.update(json.loads(sys.argv[3]) or {})
    p = Producer(settings)
    failures = []

    def delivered(err, _msg):
        if err is not None:
            failures.append(str(err))

    for line in sys.stdin:
        s = json.loads(line)
        date = datetime.datetime.fromisoformat(s["date"])
        kwargs = {"key": key_bytes(s, date), "value": value_bytes(s, date), "on_delivery": delivered}
        if "partition" in s:
            kwargs["partition"] = s["partition"]
        while True:
            try:
                p.produce(topic, **kwargs)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    left = p.flush(30)
    if failures or left:
        sys.exit("produce.py: %d undelivered, first error: %s" % (left + len(failures), failures[:1]))


main()
