"""A lister's session against revisit's swh RPC, seen as the unchanged Python
client (swh.scheduler.api.client.RemoteScheduler on swh-core's RPCClient)
sees it, without the swh packages: the same requests (every parameter of the
method, defaults included, packed the swh-core way), the same decoding of
answers and errors, and the models rebuilt and type-checked as swh-scheduler's
attrs classes with attrs_strict validators would.

  swhclient.py URL             runs the session against the RPC at URL and
                               prints one line per step, then "verdict: ok"
                               or the failure count
  swhclient.py recorded FILE…  checks the client against recorded traffic of
                               the real one: every body decodes (models
                               included) and every request packs again to
                               the same bytes; prints the same verdict
"""
import base64
import datetime
import gzip
import http.client
import json
import sys
import traceback
import urllib.parse
import uuid

import swhcore
from swhcore import UTC, LastVisitStatus, PagedResult

REQUIRED = object()


# --- the models: swh-scheduler's attrs classes, as field specs ---------------

def is_str(v):
    return isinstance(v, str)


def is_uuid(v):
    return isinstance(v, uuid.UUID)


def is_aware(v):
    # attrs_strict's datetime check, then check_timestamptz.
    return isinstance(v, datetime.datetime) and v.tzinfo is not None and v.utcoffset() is not None


def is_str_dict(v):
    return isinstance(v, dict) and all(isinstance(k, str) for k in v)


def is_bool(v):
    return isinstance(v, bool)


def is_int(v):
    return isinstance(v, int)


def is_float(v):
    return isinstance(v, float)


def is_bytes(v):
    return isinstance(v, bytes)


def is_timedelta(v):
    return isinstance(v, datetime.timedelta)


def is_list(v):
    return isinstance(v, list)


def optional(check):
    def check_optional(v):
        return v is None or check(v)
    check_optional.__name__ = "optional " + check.__name__
    return check_optional


def one_of(*values):
    def check_one_of(v):
        return v in values
    check_one_of.__name__ = "one of %s" % (values,)
    return check_one_of


def a_model(name):
    def check_model(v):
        return isinstance(v, Model) and v.type_ == name
    check_model.__name__ = "a " + name
    return check_model


def is_last_visit_status(v):
    return isinstance(v, LastVisitStatus)


def to_last_visit_status(v):
    # swh-scheduler's converter: a str, an enum value or None.
    return v if v is None or isinstance(v, LastVisitStatus) else LastVisitStatus(v)


# name: [(field, check, default or REQUIRED, converter or None)], in attrs order.
MODELS = {
    "Lister": [
        ("name", is_str, REQUIRED, None),
        ("instance_name", is_str, REQUIRED, None),
        ("id", optional(is_uuid), None, None),
        ("current_state", is_str_dict, dict, None),
        ("created", optional(is_aware), None, None),
        ("updated", optional(is_aware), None, None),
        ("last_listing_finished_at", optional(is_aware), None, None),
        ("first_visits_queue_prefix", optional(is_str), None, None),
        ("first_visits_scheduled_at", optional(is_aware), None, None),
    ],
    "ListedOrigin": [
        ("lister_id", is_uuid, REQUIRED, None),
        ("url", is_str, REQUIRED, None),
        ("visit_type", is_str, REQUIRED, None),
        ("extra_loader_arguments", is_str_dict, dict, None),
        ("last_update", optional(is_aware), None, None),
        ("is_fork", optional(is_bool), None, None),
        ("forked_from_url", optional(is_str), None, None),
        ("enabled", is_bool, True, None),
        ("first_seen", optional(is_aware), None, None),
        ("last_seen", optional(is_aware), None, None),
    ],
    "OriginVisitStats": [
        ("url", is_str, REQUIRED, None),
        ("visit_type", is_str, REQUIRED, None),
        ("last_successful", optional(is_aware), None, None),
        ("last_visit", optional(is_aware), None, None),
        ("last_visit_status", optional(is_last_visit_status), None, to_last_visit_status),
        ("last_scheduled", optional(is_aware), None, None),
        ("last_snapshot", optional(is_bytes), None, None),
        ("next_visit_queue_position", optional(is_int), None, None),
        ("next_position_offset", is_int, 4, None),
        ("successive_visits", is_int, 1, None),
    ],
    "SchedulerMetrics": [
        ("lister_id", is_uuid, REQUIRED, None),
        ("visit_type", is_str, REQUIRED, None),
        ("last_update", optional(is_aware), None, None),
        ("origins_known", is_int, 0, None),
        ("origins_enabled", is_int, 0, None),
        ("origins_never_visited", is_int, 0, None),
        ("origins_with_pending_changes", is_int, 0, None),
    ],
    "TaskType": [
        ("type", is_str, REQUIRED, None),
        ("description", is_str, REQUIRED, None),
        ("backend_name", is_str, REQUIRED, None),
        ("default_interval", optional(is_timedelta), None, None),
        ("min_interval", optional(is_timedelta), None, None),
        ("max_interval", optional(is_timedelta), None, None),
        ("backoff_factor", optional(is_float), None, None),
        ("max_queue_length", optional(is_int), 1000, None),
        ("num_retries", optional(is_int), None, None),
        ("retry_delay", optional(is_timedelta), None, None),
    ],
    "TaskArguments": [
        ("args", is_list, list, None),
        ("kwargs", is_str_dict, dict, None),
    ],
    "Task": [
        ("type", is_str, REQUIRED, None),
        ("arguments", a_model("TaskArguments"), REQUIRED, None),
        ("next_run", is_aware, REQUIRED, None),
        ("status", one_of("next_run_not_scheduled", "next_run_scheduled", "completed", "disabled"),
         "next_run_not_scheduled", None),
        ("policy", one_of("recurring", "oneshot"), "recurring", None),
        ("retries_left", optional(is_int), None, None),
        ("id", optional(is_int), None, None),
        ("current_interval", optional(is_timedelta), None, None),
        ("priority", optional(one_of("high", "normal", "low")), None, None),
    ],
    "TaskRun": [
        ("task", optional(is_int), REQUIRED, None),
        ("id", optional(is_int), None, None),
        ("backend_id", optional(is_str), None, None),
        ("scheduled", optional(is_aware), None, None),
        ("started", optional(is_aware), None, None),
        ("ended", optional(is_aware), None, None),
        ("metadata", optional(is_str_dict), None, None),
        ("status", one_of("scheduled", "started", "eventful", "uneventful", "failed", "permfailed", "lost"),
         "scheduled", None),
    ],
}


class Model:
    """One instance of a scheduler model: its class name and its fields, built
    as the attrs constructor would, or refused with TypeError."""

    def __init__(self, type_, **given):
        spec = MODELS.get(type_)
        if spec is None:
            raise TypeError("unknown model %r" % type_)
        known = [name for name, _, _, _ in spec]
        unexpected = sorted(set(given) - set(known))
        if unexpected:
            raise TypeError("%s() got unexpected fields %s" % (type_, unexpected))
        fields = {}
        for name, check, default, convert in spec:
            if name in given:
                value = given[name]
            elif default is REQUIRED:
                raise TypeError("%s() is missing the field %r" % (type_, name))
            else:
                value = default() if callable(default) else default
            if convert is not None:
                value = convert(value)
            if not check(value):
                raise TypeError("%s.%s must be %s, not %r (%s)" % (type_, name, check.__name__, value,
                                                                    type(value).__name__))
            fields[name] = value
        self.type_, self.fields = type_, fields

    def __getattr__(self, name):
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(name) from None

    def evolve(self, **changes):
        return Model(self.type_, **{**self.fields, **changes})

    def __eq__(self, other):
        return isinstance(other, Model) and (self.type_, self.fields) == (other.type_, other.fields)

    def __repr__(self):
        return "%s(%r)" % (self.type_, self.fields)


def decode_model(d):
    # swh-scheduler: getattr(model, d.pop("__type__"))(**d)
    return Model(d.pop("__type__"), **d)


CODEC = swhcore.Codec(
    swhcore.ENCODERS + [
        (Model, "scheduler_model", lambda m: {**m.fields, "__type__": m.type_}),
        (LastVisitStatus, "last_visit_status", lambda s: s.value),
    ],
    {
        **swhcore.DECODERS,
        "scheduler_model": decode_model,
        "last_visit_status": LastVisitStatus,
        "exception": lambda d: Exception(d.get("message")),
    },
)


# --- errors, as RPCClient.raise_for_status raises them ------------------------

class RemoteException(Exception):
    pass


class TransientRemoteException(RemoteException):
    pass


class APIError(Exception):
    pass


class SchedulerException(Exception):
    pass


class StaleData(SchedulerException):
    pass


class UnknownPolicy(SchedulerException):
    pass


REraise = [SchedulerException, StaleData, UnknownPolicy]


class ChunkedResponse(Exception):
    """The client returns a chunked body undecoded, as raw bytes: its callers
    break on it."""


# --- the client ----------------------------------------------------------------

class Client:
    """RemoteScheduler's calls used by a lister and by the scheduler's tools."""

    def __init__(self, url):
        self.url = urllib.parse.urlsplit(url.rstrip("/") + "/")
        self.last = None  # (status, headers, body) of the last answer

    def post(self, path, params):
        conn = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=30)
        try:
            conn.request("POST", self.url.path + path, body=CODEC.packb(params),
                         headers={"Content-Type": "application/x-msgpack", "Accept": "application/x-msgpack"})
            resp = conn.getresponse()
            body = resp.read()
            headers = {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()
        self.last = (resp.status, headers, body)
        if "chunked" in headers.get("transfer-encoding", ""):
            raise ChunkedResponse("%s: a chunked answer of %d bytes" % (path, len(body)))
        self.raise_for_status(resp.status, headers, body)
        return self.decode(headers, body)

    @staticmethod
    def decode(headers, body):
        content_type = headers.get("content-type", "")
        if content_type.startswith("application/x-msgpack"):
            return CODEC.unpackb(body)
        if content_type.startswith("application/json"):
            return json.loads(body)
        if content_type.startswith("text/"):
            return body.decode()
        raise ValueError("wrong content type %r" % content_type)

    def raise_for_status(self, status, headers, body):
        if status == 404:
            raise RemoteException("404 not found")
        if status // 100 == 4:
            data = self.decode(headers, body)
            if not isinstance(data, dict):
                raise APIError(data)
            for cls in REraise:
                if cls.__name__ == data.get("type"):
                    raise cls(*data["args"])
            raise RemoteException(data)
        if status in (502, 503):
            raise TransientRemoteException(self.decode(headers, body))
        if status // 100 == 5:
            raise RemoteException(self.decode(headers, body))
        if status // 100 != 2:
            raise RemoteException("API HTTP error: %d %r" % (status, body))

    # Each call sends every parameter of the interface method, defaults too.

    def get_or_create_lister(self, name, instance_name=None, first_visits_queue_prefix=None):
        return self.post("lister/get_or_create", {"name": name, "instance_name": instance_name,
                                                  "first_visits_queue_prefix": first_visits_queue_prefix})

    def get_lister(self, name, instance_name=None):
        return self.post("lister/get", {"name": name, "instance_name": instance_name})

    def update_lister(self, lister):
        return self.post("lister/update", {"lister": lister})

    def record_listed_origins(self, listed_origins):
        return self.post("origins/record", {"listed_origins": listed_origins})

    def get_listed_origins(self, lister_id=None, url=None, urls=None, enabled=True, limit=1000, page_token=None):
        return self.post("origins/get", {"lister_id": lister_id, "url": url, "urls": urls, "enabled": enabled,
                                         "limit": limit, "page_token": page_token})

    def grab_next_visits(self, visit_type, count, policy, enabled=True, lister_uuid=None, lister_name=None,
                         lister_instance_name=None, timestamp=None,
                         absolute_cooldown=datetime.timedelta(hours=12),
                         scheduled_cooldown=datetime.timedelta(days=7),
                         failed_cooldown=datetime.timedelta(days=14),
                         not_found_cooldown=datetime.timedelta(days=31),
                         tablesample=None, dry_run=False):
        return self.post("origins/grab_next", {
            "visit_type": visit_type, "count": count, "policy": policy, "enabled": enabled,
            "lister_uuid": lister_uuid, "lister_name": lister_name, "lister_instance_name": lister_instance_name,
            "timestamp": timestamp, "absolute_cooldown": absolute_cooldown,
            "scheduled_cooldown": scheduled_cooldown, "failed_cooldown": failed_cooldown,
            "not_found_cooldown": not_found_cooldown, "tablesample": tablesample, "dry_run": dry_run})

    def create_task_type(self, task_type):
        return self.post("task_type/create", {"task_type": task_type})

    def get_task_type(self, task_type_name):
        return self.post("task_type/get", {"task_type_name": task_type_name})

    def get_task_types(self):
        return self.post("task_type/get_all", {})

    def origin_visit_stats_upsert(self, origin_visit_stats):
        return self.post("visit_stats/upsert", {"origin_visit_stats": origin_visit_stats})

    def origin_visit_stats_get(self, ids):
        return self.post("visit_stats/get", {"ids": ids})


# --- the session ---------------------------------------------------------------

class Failed(Exception):
    pass


def expect(cond, what, *args):
    if not cond:
        raise Failed(what % args if args else what)


def expect_raises(cls, fn):
    try:
        fn()
    except cls as e:
        expect(type(e) is cls, "raised %s, want %s: %r", type(e).__name__, cls.__name__, e)
        return e
    raise Failed("no %s raised" % cls.__name__)


def expect_models(values, type_):
    expect(isinstance(values, list), "want a list of %s, got %r", type_, values)
    for v in values:
        expect(isinstance(v, Model) and v.type_ == type_, "want a %s, got %r", type_, v)


def session(client):
    """The steps of a lister's session, each a name and a function."""
    state = {}
    # A lister records more origins than fit in 2 KB of answer.
    urls = ["https://gitlab.example.org/group-%02d/project-with-a-long-name-%02d" % (i // 10, i) for i in range(30)]
    updated = datetime.datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    visited = datetime.datetime(2026, 3, 2, 8, 30, 0, 654321, tzinfo=UTC)
    snapshot = bytes(range(20))

    def get_or_create_lister():
        lister = client.get_or_create_lister("gitlab", "gitlab.example.org", first_visits_queue_prefix="high_priority")
        expect_models([lister], "Lister")
        expect(isinstance(lister.id, uuid.UUID), "Lister.id is %r", lister.id)
        expect(lister.first_visits_queue_prefix == "high_priority", "first_visits_queue_prefix %r",
               lister.first_visits_queue_prefix)
        expect(lister.current_state == {} and lister.updated is not None, "a new lister: %r", lister)
        again = client.get_or_create_lister("gitlab", "gitlab.example.org", first_visits_queue_prefix="high_priority")
        expect(again == lister, "again: %r, first: %r", again, lister)
        state["lister"] = lister

    def record_listed_origins():
        lister = state["lister"]
        origins = [Model("ListedOrigin", lister_id=lister.id, url=u, visit_type="git",
                         extra_loader_arguments={"incremental": True}, last_update=updated + datetime.timedelta(hours=i),
                         is_fork=i % 3 == 0, forked_from_url=None, enabled=True)
                   for i, u in enumerate(urls)]
        recorded = client.record_listed_origins(origins)
        expect_models(recorded, "ListedOrigin")
        expect(len(recorded) == len(origins), "%d recorded, %d sent", len(recorded), len(origins))
        for sent, got in zip(origins, recorded):
            for f in ("lister_id", "url", "visit_type", "extra_loader_arguments", "last_update", "is_fork", "enabled"):
                expect(getattr(got, f) == getattr(sent, f), "%s: %s %r, sent %r", sent.url, f, getattr(got, f),
                       getattr(sent, f))
            expect(got.first_seen is not None and got.last_seen is not None, "%s: first/last seen unset", sent.url)

    def answer_over_2kb_has_content_length():
        # The answer of the last call (the recorded origins) is the large one.
        status, headers, body = client.last
        expect(len(body) > 2048, "the answer has only %d bytes", len(body))
        expect("content-length" in headers, "no Content-Length: %r", headers)
        expect(int(headers["content-length"]) == len(body), "Content-Length %s for %d bytes",
               headers["content-length"], len(body))

    def get_listed_origins_pages():
        lister = state["lister"]
        seen, token, pages = [], None, 0
        while True:
            page = client.get_listed_origins(lister_id=lister.id, limit=12, page_token=token)
            pages += 1
            expect(type(page) is PagedResult, "a page is %r", page)
            expect_models(page.results, "ListedOrigin")
            seen += [o.url for o in page.results]
            token = page.next_page_token
            if token is None:
                break
            # PaginatedListedOriginList takes a token of two strings only.
            expect(isinstance(token, list) and len(token) == 2 and all(isinstance(s, str) for s in token),
                   "page token %r", token)
            expect(pages < 10, "more than 10 pages")
        expect(sorted(seen) == sorted(urls), "pages gave %d origins (%d distinct), want the %d recorded",
               len(seen), len(set(seen)), len(urls))
        expect(pages == 3, "%d pages of 12 for 30 origins, want 3", pages)

    def update_lister():
        lister = state["lister"]
        finished = datetime.datetime.now(tz=UTC)
        new = client.update_lister(lister.evolve(current_state={"page": 3, "cursor": "abc"},
                                                 last_listing_finished_at=finished))
        expect_models([new], "Lister")
        expect(new.id == lister.id, "id %r, want %r", new.id, lister.id)
        expect(new.current_state == {"page": 3, "cursor": "abc"}, "current_state %r", new.current_state)
        expect(new.last_listing_finished_at == finished, "last_listing_finished_at %r, sent %r", new.last_listing_finished_at, finished)
        expect(new.updated != lister.updated, "updated did not move: %r", new.updated)
        state["stale"], state["lister"] = lister, new

    def update_stale_lister():
        e = expect_raises(StaleData, lambda: client.update_lister(state["stale"].evolve(current_state={"page": 9})))
        expect(isinstance(e, SchedulerException), "StaleData is not a SchedulerException")
        expect(client.get_lister("gitlab", "gitlab.example.org") == state["lister"],
               "a stale update changed the lister")

    def grab_next_visits():
        grabbed = client.grab_next_visits("git", 5, "oldest_scheduled_first")
        expect_models(grabbed, "ListedOrigin")
        expect(len(grabbed) == 5, "grabbed %d, want 5", len(grabbed))
        expect(all(o.url in urls and o.visit_type == "git" for o in grabbed), "grabbed %r", grabbed)
        state["grabbed"] = grabbed[0].url
        expect_raises(UnknownPolicy, lambda: client.grab_next_visits("git", 5, "nope"))

    def get_task_type_missing():
        got = client.get_task_type("load-nothing")
        expect(got is None, "a missing task type is %r, want None", got)

    def task_types():
        task_type = Model("TaskType", type="load-git", description="Update a git repository",
                          backend_name="swh.loader.git.tasks.UpdateGitRepository",
                          default_interval=datetime.timedelta(days=64), min_interval=datetime.timedelta(hours=12),
                          max_interval=datetime.timedelta(days=64), backoff_factor=2.0, max_queue_length=5000,
                          num_retries=7, retry_delay=datetime.timedelta(hours=2))
        expect(client.create_task_type(task_type) is None, "create_task_type answers something")
        all_types = client.get_task_types()
        expect_models(all_types, "TaskType")
        expect(task_type in all_types, "get_task_types %r lacks %r", all_types, task_type)
        expect(client.get_task_type("load-git") == task_type, "get_task_type %r",
               client.get_task_type("load-git"))

    def visit_stats():
        url = state["grabbed"]
        stats = Model("OriginVisitStats", url=url, visit_type="git", last_successful=visited, last_visit=visited,
                      last_visit_status=LastVisitStatus.successful, last_snapshot=snapshot,
                      next_visit_queue_position=None, next_position_offset=4, successive_visits=1)
        expect(client.origin_visit_stats_upsert([stats]) is None, "upsert answers something")
        got = client.origin_visit_stats_get([(url, "git")])
        expect_models(got, "OriginVisitStats")
        expect(len(got) == 1, "%d stats, want 1", len(got))
        s = got[0]
        expect(s.last_snapshot == snapshot, "last_snapshot %r", s.last_snapshot)
        expect(s.last_visit_status is LastVisitStatus.successful, "last_visit_status %r", s.last_visit_status)
        expect(s.last_visit == visited and s.last_successful == visited, "last_visit %r, last_successful %r",
               s.last_visit, s.last_successful)
        expect(s.last_scheduled is not None, "the grabbed origin has no last_scheduled")
        missing = client.origin_visit_stats_get([("https://nowhere.example.org/x", "git")])
        expect(missing == [], "stats of an unknown origin: %r", missing)

    def unknown_endpoint():
        e = expect_raises(RemoteException, lambda: client.post("nothing/here", {}))
        expect(e.args == ("404 not found",), "an unknown endpoint raised %r", e)

    return [
        ("get_or_create_lister", get_or_create_lister),
        ("record_listed_origins", record_listed_origins),
        ("answer_over_2kb_has_content_length", answer_over_2kb_has_content_length),
        ("get_listed_origins_pages", get_listed_origins_pages),
        ("update_lister", update_lister),
        ("update_stale_lister", update_stale_lister),
        ("grab_next_visits", grab_next_visits),
        ("get_task_type_missing", get_task_type_missing),
        ("task_types", task_types),
        ("visit_stats", visit_stats),
        ("unknown_endpoint", unknown_endpoint),
    ]


def check_recorded(files):
    """The steps of checking this client against recorded exchanges."""

    def check(path):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for n, line in enumerate(f, 1):
                x = json.loads(line)
                for what in ("req", "resp"):
                    body = base64.b64decode(x[what + "_b64"])
                    if not body or not x[what + "_ct"].startswith("application/x-msgpack"):
                        continue
                    try:
                        value = CODEC.unpackb(body)
                    except Exception as e:
                        raise Failed("line %d %s %s: %r" % (n, x["path"], what, e))
                    if what == "req":
                        expect(CODEC.packb(value) == body, "line %d %s: the request packs to other bytes",
                               n, x["path"])

    return [(path, lambda path=path: check(path)) for path in files]


def main():
    if sys.argv[1] == "recorded":
        steps = check_recorded(sys.argv[2:])
    else:
        steps = session(Client(sys.argv[1]))
    failures = 0
    for name, step in steps:
        try:
            step()
        except Failed as e:
            failures += 1
            print("FAIL %s: %s" % (name, e))
        except Exception:
            failures += 1
            print("FAIL %s: %s" % (name, traceback.format_exc().strip().replace("\n", "\n    ")))
        else:
            print("ok   %s" % name)
    print("verdict: %s" % ("ok" if failures == 0 else "%d failures" % failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
