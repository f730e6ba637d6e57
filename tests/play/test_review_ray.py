"""The review pool's Ray backend on a local Ray runtime: the same bounds, progress from the task,
results and failures handed back as the process backend hands them (stand-in tasks from
tests/reviewkit.py), and a real review of a stored game through the server's task."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import reviewkit
from moonshot.play.review_pool import ReviewPool, ReviewRefused, worker_info
from moonshot.play.review_ray import RayBackend, review_backend

pytestmark = [pytest.mark.ray, pytest.mark.asyncio]


@pytest.fixture(scope="module")
def ray_runtime() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    # the stand-in tasks live in tests/reviewkit.py: Ray's workers import them from there
    tests = str(Path(reviewkit.__file__).parent)
    path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH", "")) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray
    ray.shutdown()


async def finished_game(url: str) -> str:
    """A finished standard game of four random bots, stored at ``url``."""
    import random

    from moonshot.bots.registry import make_bot
    from moonshot.core.variants import find_variant
    from moonshot.runtime.table import BotSeat, Table
    from moonshot.store import Store, StoreRecorder

    store = await Store.open(url)
    recorder = StoreRecorder(store, batch_delay=0)
    recorder.start()
    seats = [BotSeat(make_bot("random"), random.Random(s), name=f"bot{s}") for s in range(4)]
    table = Table(find_variant("standard"), seats, seed=5, table_id="ray-review", recorder=recorder)
    table.start()
    await table.done
    await recorder.close()
    await store.close()
    return table.id


async def until(check: Callable[[], bool], timeout: float = 120) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


async def test_no_address_is_no_ray_backend() -> None:
    assert review_backend(None) is None
    backend = review_backend("local", nice=7)
    assert isinstance(backend, RayBackend) and backend.address == "local" and backend.nice == 7


async def test_reviews_and_hints_run_as_ray_tasks_within_the_pools_bounds(ray_runtime: Any, tmp_path: Path) -> None:
    backend = RayBackend("auto", nice=19)
    pool = ReviewPool(1, max_jobs=3, per_name=2, backend=backend)
    try:
        # a hint: a Ray task at the lowest priority, one BLAS thread, in another process
        info = await asyncio.wait_for(pool.call(worker_info), 120)
        assert info["nice"] == 19 and info["blas"] == "1"
        assert not backend.started  # the runtime this process started is used as it is
        # progress from the task, the result back
        gate = tmp_path / "gate"
        first = pool.submit("a1", "ann", reviewkit.counting, (5, str(gate)))
        second = pool.submit("a2", "ann", reviewkit.counting, (2,))
        with pytest.raises(ReviewRefused, match="ann has 2 reviews"):
            pool.submit("a3", "ann", reviewkit.counting, (1,))
        assert pool.submit("a1", "bob", reviewkit.counting, (5,)) is first  # the same key: one job
        await until(lambda: first.status == "running" and first.done >= 1)
        assert first.progress == {"done": 1, "total": 5}
        assert second.status == "queued" and pool.position(second) == 1  # one review at a time
        gate.touch()
        await asyncio.wait_for(asyncio.shield(first.finished), 120)  # type: ignore[arg-type]
        await asyncio.wait_for(asyncio.shield(second.finished), 120)  # type: ignore[arg-type]
        assert first.status == second.status == "done"
        assert first.result["steps"] == 5 and first.result["nice"] == 19
        assert first.progress == {"done": 5, "total": 5}
        # a task that raises: its own exception's words, and the pool goes on
        failing = pool.submit("f", "cy", reviewkit.failing)
        await asyncio.wait_for(asyncio.shield(failing.finished), 120)  # type: ignore[arg-type]
        assert failing.status == "failed" and "ValueError: a stand-in review that fails" in (failing.error or "")
        # a worker that dies fails its job; asking again starts it over
        crashed = pool.submit("c", "cy", reviewkit.crash)
        await asyncio.wait_for(asyncio.shield(crashed.finished), 120)  # type: ignore[arg-type]
        assert crashed.status == "failed" and "died" in (crashed.error or ""), crashed.error
        again = pool.submit("c", "cy", reviewkit.counting, (2,))
        await asyncio.wait_for(asyncio.shield(again.finished), 120)  # type: ignore[arg-type]
        assert again.status == "done" and again.result["steps"] == 2
    finally:
        pool.close()
    assert ray_runtime.is_initialized()  # left running: it was not the backend's


async def test_a_stored_game_is_reviewed_by_the_servers_task_on_ray(ray_runtime: Any, tmp_path: Path) -> None:
    from moonshot.http.review import review_stored

    url = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    gid = await finished_game(url)
    pool = ReviewPool(1, backend=RayBackend("auto", nice=0))
    try:
        job = pool.submit((gid, 1, "s20"), "ann", review_stored, (url, gid, 1), {"simulations": 20})
        await asyncio.wait_for(asyncio.shield(job.finished), 300)  # type: ignore[arg-type]
        assert job.status == "done", job.error
        review = json.loads(job.result)  # the worker's JSON text, as the server stores it
        assert review["format"] == "moonshot-review/1" and review["game_id"] == gid and review["seat"] == 1
        assert job.progress["total"] == review["summary"]["decisions"] > 0
    finally:
        pool.close()


async def test_a_server_with_review_ray_answers_a_review_over_http(ray_runtime: Any, tmp_path: Path) -> None:
    """``serve --review-ray auto``: the server's pool runs on Ray; GET /api/games/<id>/review starts
    the job (202), then answers the stored review (200), as with worker processes."""
    import httpx

    from moonshot.server.app import ServerApp
    from moonshot.server.config import ServerConfig

    url = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    gid = await finished_game(url)
    app = ServerApp(ServerConfig(sessions_port=None, http_port=0, db_url=url, bot="random", review_ray="auto"))
    await app.start()
    try:
        assert app.turbo is not None and isinstance(app.turbo.reviews.backend, RayBackend)
        base = f"http://127.0.0.1:{app.http_port}"
        async with httpx.AsyncClient(base_url=base, cookies={"name": "ann"}, timeout=60) as c:
            path = f"/api/games/{gid}/review"
            r = await c.get(path, params={"seat": 3, "simulations": 20})
            assert r.status_code == 202, r.text
            async with asyncio.timeout(300):
                while r.status_code == 202:
                    await asyncio.sleep(0.2)
                    r = await c.get(path, params={"seat": 3, "simulations": 20})
            assert r.status_code == 200, r.text
            review = r.json()["review"]
            assert review["game_id"] == gid and review["seat"] == 3 and review["budget"]["simulations"] == 20
    finally:
        await app.stop()
