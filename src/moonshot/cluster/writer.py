"""The node's one ordered writer to Redis, fenced by table leases, and its Lua script.

Every write of a node (a table's log entry, a directory entry, a message to another node's
stream) is queued here and sent in order, a batch at a time, to one Lua script that runs an op
only while the node still holds the op's fence (a table's lease). Messages for this node's own
players and callbacks (``after_writes``) run once everything queued before them is in Redis:
the write-ahead rule without a second round trip. A batch Redis refuses is kept, in order, and
tried again with backoff.

It only orders, fences and delivers: it decides nothing about tables, seats or the lobby (what a
message does is the ``deliver`` callback's, what a lost lease means is ``lease_lost``'s).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from moonshot.cluster import messages as wire
from moonshot.cluster.kinds import redis_key

log = logging.getLogger("moonshot.cluster")

STREAM_MAXLEN = 200_000  # entries kept per node stream (approximate trimming)
WRITTEN_TIMEOUT = 15.0  # s a request's answer waits for its writes to reach Redis before it is refused
WRITE_BACKOFF_FIRST = 0.1  # s before the first retry of a failed write batch, doubling ...
WRITE_BACKOFF_MAX = 2.0  # ... up to this

_TO_TABLE = wire.TO_TABLE  # messages a player's node sends to a table's owner


class ClusterUnavailable(Exception):
    """Redis has not confirmed this process's writes in time: what waited on them must not be
    acknowledged (the writes stay queued and land once Redis is back)."""


# One batch of ordered writes, JSON in one argument (one argument per op would cost redis-py an
# encoding call each): each op is [fence, kind, key, a, b], all strings. ``fence`` is a lease key the
# node must still hold for the op to run ('' = none); kinds: x XADD (a: payload), r RPUSH (a),
# s SET (a, b: PX ms or ''), h HSET (a: field, b: value), hd HDEL (a), d DEL, e EXPIRE (a),
# sr SREM (a), xa XADD a to the stream of every live node in the set ``key`` but this one (b: prefix).
WRITE_LUA = """
local me = ARGV[1]
local maxlen = ARGV[2]
local ops = cjson.decode(ARGV[3])
local owned = {}
local lost = {}
for _, op in ipairs(ops) do
  local fence, kind, key, a, b = op[1], op[2], op[3], op[4], op[5]
  local ok = true
  if fence ~= '' then
    if owned[fence] == nil then
      owned[fence] = (redis.call('GET', fence) == me)
      if not owned[fence] then table.insert(lost, fence) end
    end
    ok = owned[fence]
  end
  if ok then
    if kind == 'x' then redis.call('XADD', key, 'MAXLEN', '~', maxlen, '*', 'm', a)
    elseif kind == 'r' then redis.call('RPUSH', key, a)
    elseif kind == 's' then
      if b ~= '' then redis.call('SET', key, a, 'PX', b) else redis.call('SET', key, a) end
    elseif kind == 'h' then redis.call('HSET', key, a, b)
    elseif kind == 'hd' then redis.call('HDEL', key, a)
    elseif kind == 'd' then redis.call('DEL', key)
    elseif kind == 'e' then redis.call('EXPIRE', key, a)
    elseif kind == 'sr' then redis.call('SREM', key, a)
    elseif kind == 'xa' then
      for _, n in ipairs(redis.call('SMEMBERS', key)) do
        if n ~= me and redis.call('EXISTS', b .. 'node:' .. n) == 1 then
          redis.call('XADD', b .. 'in:' .. n, 'MAXLEN', '~', maxlen, '*', 'm', a)
        end
      end
    end
  end
end
return lost
"""


def _unset(*_: Any) -> None:
    raise RuntimeError("the writer's callbacks are set by the node that composes it")


class OrderedWriter:
    """The queue of one node's writes and the task that sends them (see the module docstring).

    ``fenced`` is the node's set of tables whose lease it lost: a local delivery fenced by one
    of them is dropped. ``deliver`` hands a message to this node's own tables or players,
    ``lease_lost`` is told each lease key the script found no longer ours."""

    def __init__(self, node: str, prefix: str, fenced: set[str]) -> None:
        self.node = node
        self.prefix = prefix
        self.fenced = fenced
        self.deliver: Callable[[wire.Message], None] = _unset
        self.lease_lost: Callable[[str], None] = _unset
        self.redis: Any = None
        self._sha = ""
        # queued writes: (fence, kind, key, a, b), or ("L", fence, message) for this node's players
        self._ops: list[tuple[Any, ...]] = []
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._failures = 0  # failed tries of the current write batch (0: Redis answers)
        self._failing_since = 0.0

    def key(self, kind: str, name: str = "") -> str:
        return redis_key(self.prefix, kind, name)

    async def load(self, redis: Any) -> None:
        """Use ``redis`` (its script loaded there) from now on."""
        self.redis = redis
        self._sha = await redis.script_load(WRITE_LUA)

    @property
    def queued(self) -> int:
        return len(self._ops)

    def write(self, fence_key: str, kind: str, key: str, a: str = "", b: str | int = "") -> None:
        self._ops.append((fence_key, kind, key, a, str(b)))
        self._wake.set()

    def local(self, fence_key: str, item: wire.Message | Callable[[], None]) -> None:
        """Hand ``item`` over here (a message to :attr:`deliver`, or a call) once every write
        queued before it is in Redis, unless the fence's lease was lost meanwhile."""
        self._ops.append(("L", fence_key, item))
        self._wake.set()

    def send(self, node: str, msg: wire.Message, fence: str | None = None) -> None:
        """Append ``msg`` to ``node``'s stream (after every write queued before it).

        A message for this node itself skips Redis: a player's message to a table owned here is
        handled at once (nothing is durable before the table applies it, and the table's log
        entry then goes through Redis); a table's message to a player connected here is handed
        over by the writer once every write queued before it (the action's log entry) is in
        Redis, so the write-ahead rule holds without a second round trip."""
        if node == self.node:
            if msg.kind in _TO_TABLE:
                self.deliver(msg)
            else:
                self.local(self.key("lease", fence) if fence else "", msg)
            return
        self.write(self.key("lease", fence) if fence else "", "x", self.key("in", node), wire.encode(msg))

    def send_all(self, msg: wire.Message) -> None:
        """``msg`` to every other live node (the ``nodes`` set, read by the write script itself,
        so a node that joined a moment ago gets it too)."""
        self.write("", "xa", self.key("nodes"), wire.encode(msg), self.prefix)

    async def drain(self, timeout: float = 5.0) -> None:
        """Wait until every queued write reached Redis."""
        end = asyncio.get_running_loop().time() + timeout
        while (self._ops or not self._idle.is_set()) and asyncio.get_running_loop().time() < end:
            await asyncio.sleep(0.01)

    async def written(self, timeout: float | None = None) -> None:
        """Wait until every write queued so far is in Redis (not the ones queued after, unlike
        :meth:`drain`). Raises :class:`ClusterUnavailable` when that takes over ``timeout``
        seconds (default :data:`WRITTEN_TIMEOUT`); the writes stay queued and land, in order,
        once Redis answers again."""
        timeout = WRITTEN_TIMEOUT if timeout is None else timeout
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def mark() -> None:
            if not done.done():
                done.set_result(None)

        self.local("", mark)
        try:
            await asyncio.wait_for(done, timeout)
        except TimeoutError:
            log.warning("event=cluster_write_slow waited_s=%.1f queued=%d", timeout, len(self._ops))
            raise ClusterUnavailable(f"the cluster's Redis has not confirmed a write for {timeout:.0f} s") from None

    async def run(self) -> None:
        """The writer's task: batches in order, for as long as the node runs."""
        assert self.redis is not None
        while True:
            if not self._ops:
                self._wake.clear()
                await self._wake.wait()
            ops, self._ops = self._ops, []
            self._idle.clear()
            remote = [op for op in ops if op[0] != "L"]
            lost: list[Any] = []
            try:
                if remote:
                    batch = json.dumps(remote)
                    lost = await self.redis.evalsha(self._sha, 0, self.node, STREAM_MAXLEN, batch) or []
            except asyncio.CancelledError:
                raise
            except Exception as e:
                # Redis down or refusing: keep every op, in order, and try again with backoff
                # (0.1 s doubling to 2 s); one log line when the outage starts, one when it ends
                if self._failures == 0:
                    self._failing_since = time.monotonic()
                    log.warning("event=cluster_write_failed ops=%d error=%s", len(ops), json.dumps(repr(e)))
                self._failures += 1
                self._ops[:0] = ops
                self._idle.set()
                await asyncio.sleep(min(WRITE_BACKOFF_MAX, WRITE_BACKOFF_FIRST * 2 ** min(self._failures - 1, 8)))
                continue
            if self._failures:
                log.warning(
                    "event=cluster_write_recovered tries=%d down_s=%.1f",
                    self._failures,
                    time.monotonic() - self._failing_since,
                )
                self._failures = 0
            lost_keys = {k.decode() if isinstance(k, bytes) else str(k) for k in lost}
            for op in ops:  # messages for players connected here, in order, once written
                if op[0] == "L" and op[1] not in lost_keys:
                    fence = op[1]
                    if fence and fence[len(self.prefix) + len("lease:") :] in self.fenced:
                        continue  # the table lost its lease here meanwhile
                    try:
                        if callable(op[2]):
                            op[2]()
                        else:  # a protocol's own kinds (cluster.handlers) too
                            self.deliver(cast(wire.Message, op[2]))
                    except Exception:
                        log.exception("event=cluster_local_delivery_failed")
            self._idle.set()
            for k in lost_keys:
                self.lease_lost(k)
