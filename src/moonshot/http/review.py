"""The review and hint routes (docs/review.md): ``GET /api/games/{id}/review`` and
``POST /api/games/{id}/hint``, and who may have them.

A review is of a finished game only (a running one is 409 for everyone, seated or not), and of a
tournament's game only once the tournament is over (its deal set is played in other rotations: 403
until then). It is computed from the stored game (its rules, seed, actions and fixed deals, as
``/api/games/{id}`` replays it) in the server's :class:`~moonshot.play.review_pool.ReviewPool`, then
kept in the store (:mod:`moonshot.store.reviews`): the first request starts it (202 with progress
while it runs), later ones poll, and once it is stored every request reads it at no cost.

A hint values the decision the caller faces now from the caller's own seat's view (what a bot of
that seat would be given), in the review pool's hint worker, never on the event loop. Hints are for
practice only (:func:`hint_refusal`): an unrated game of one person and that person's own bots,
never a tournament's or a rated game, never a table where another person or a program of another
protocol sits, and only for the caller's own seat when it is to act.

Reviews started and hints are rate-limited per name (and reviews per address) by the server's one
:class:`~moonshot.runtime.limits.ClientGuard`; the pool bounds what is queued.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from moonshot.bots.review import DEFAULT_WORLDS
from moonshot.core.actions import action_to_dict
from moonshot.core.refusals import Reason
from moonshot.core.views import seat_view
from moonshot.http.endpoints import endpoint
from moonshot.http.identity import Caller, Identity
from moonshot.http.limits import client_address
from moonshot.http.names import same_name
from moonshot.play.review_pool import ReviewFailed, ReviewJob, ReviewRefused, hint_task, review_task
from moonshot.protocols.turbo.codec import RequestError
from moonshot.store.reviews import budget_key, game_state, load_review_text, save_review
from moonshot.store.schema import rules_named

log = logging.getLogger("moonshot.review")

# worlds a decision when the request names none: the review's own default (`moonshot review`'s), a
# standard game's seat in about 15 s of one worker on the 2-core machine
REVIEW_SIMULATIONS = DEFAULT_WORLDS
MAX_SIMULATIONS = 2000
MAX_RETRY_AFTER = 10  # seconds: the longest a queued review's 202 asks its client to wait
HINT_THINK_MS = 600  # a hint's budget: it answers in about a second
REVIEWS_OFF = "reviews and hints are off on this server (moonshot serve --review-workers 0)"


async def tournament_over(lobby: Any, tid: Any) -> bool:
    """Whether the tournament ``tid`` is over (finished or failed), from the server's tournaments
    or the store."""
    from moonshot.runtime.tournament import KEY_PREFIX

    if not isinstance(tid, str):
        return False
    state = lobby.tournaments.state(tid) if lobby.tournaments is not None else None
    if state is None and lobby.store is not None:
        state = await lobby.store.get_value(KEY_PREFIX + tid)
    return isinstance(state, dict) and state.get("status") in ("finished", "failed")


async def review_refusal(lobby: Any, status: str, meta: dict[str, Any]) -> tuple[int, str, str] | None:
    """Why a stored game may not be reviewed now (status, reason and the reason's code), or None."""
    if status == "running":
        return 409, "the game is not over", "game_not_over"
    if status != "finished":
        return 409, f"the game did not finish ({status}): there is nothing to review", "game_unfinished"
    tid = meta.get("tournament")
    if tid is not None and not await tournament_over(lobby, tid):
        return 403, "a tournament's game is reviewed once the tournament is over", "tournament_review_later"
    return None


# why hints are not allowed (the text), with its ``code`` and ``params`` for the web app's catalogue
# (error.<code>): the text-with-a-code the engine's refusals use
HintRefusal = Reason


def practice_game(meta: dict[str, Any]) -> bool:
    """Whether a game's stored meta says it is a practice game (hints may be allowed in it): made
    as one (``"practice": true``), unrated, no program of another protocol, no tournament."""
    return (
        meta.get("practice") is True
        and bool(meta.get("unrated"))
        and not meta.get("mixed")
        and meta.get("tournament") is None
    )


def hint_refusal(g: Any, name: str | None = None, bot_names: Any = None) -> HintRefusal | None:
    """Why hints are not allowed in ``g`` (for ``name``, if given), or None. Allowed only in a
    game created as a practice game (``POST /lobby/new`` ``"practice": true``) that is unrated and
    whose one person is its creator (``name``) and whose other chairs are all the lobby's own bots:
    not a tournament's game, not rated, no other person, no program of another protocol. Every
    condition is checked here, the practice field too: a practice game that broke one (it cannot
    be joined, but a check is cheaper than a proof) gets no hint."""
    hosted = g.hosted
    if hosted is not None and hosted.table.meta.get("tournament") is not None:
        return HintRefusal("hints are not allowed in a tournament's game", "hint_tournament")
    if g.rated:
        return HintRefusal(
            "hints are only for practice games (unrated, you and your own bots): this game is rated", "hint_rated"
        )
    people = [m for m in g.members if m.kind == "human" or m.remote is not None]
    if any(m.remote is not None for m in g.members):
        return HintRefusal("hints are not allowed at a table with players of other protocols", "hint_mixed_table")
    if len(people) != 1:
        return HintRefusal("hints are only for practice games: another person sits at this table", "hint_other_person")
    if any(m.kind == "bot" and bot_names is not None and m.algorithm not in bot_names for m in g.members):
        return HintRefusal(
            "hints are only for practice games: a chair is held by a program, not one of your bots", "hint_program_seat"
        )
    if not getattr(g, "practice", False):
        return HintRefusal(
            'hints are only for practice games: this game was not created as one ("practice": true)',
            "hint_not_practice",
        )
    if name is not None and not same_name(people[0].name, name):
        return HintRefusal(f"{name} has no seat in this game", "no_seat", {"name": name})
    return None


def hint_answer(evaluation: dict[str, Any], seat: int) -> dict[str, Any]:
    """The hint's JSON from a worker's evaluation: the best option, its margin over the next."""
    options = evaluation["options"]
    best = options[0]
    margin = options[1]["expected"] - best["expected"] if len(options) > 1 else 0.0
    return {
        "seat": seat,
        "kind": evaluation["kind"],
        "best": best["label"],
        "margin": round(margin, 3),
        "options": options,
        "complete": evaluation["complete"],
        "worlds": evaluation["worlds"],
    }


def review_stored(
    db_url: str,
    game_id: str,
    seat: int,
    *,
    simulations: int | None = None,
    think_ms: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """In a review worker: read the finished game ``game_id`` from the store at ``db_url`` (its own
    connection) and review ``seat``: the review's JSON (moonshot.play.review_pool.review_task) as
    text, encoded here so that the server's loop never encodes (nor parses) a review: it stores
    the text and hands it on as it is."""
    from moonshot.protocols.kierki.gamefile import parse_game
    from moonshot.store import Store, register_game_file_parser

    register_game_file_parser(parse_game)  # records that keep a Kierki game file's text

    async def read() -> Any:
        store = await Store.open(db_url, create=False)
        try:
            return await store.load(game_id)
        finally:
            await store.close()

    rec = asyncio.run(read())
    if rec is None or rec.status != "finished":
        raise ValueError(f"game {game_id!r} is not a finished game in the store")
    review = review_task(
        rules_named(rec.variant),
        rec.seed,
        [action_to_dict(a) for a in rec.actions],
        seat,
        deals=rec.deals(),
        simulations=simulations,
        think_ms=think_ms,
        game_id=game_id,
        progress=progress,
    )
    return json.dumps(review, separators=(",", ":"))


def done_response(text: str) -> Response:
    """200 ``{"status": "done", "review": ...}`` around a review's JSON text, not parsed again."""
    body = '{"status":"done","review":' + text + "}"
    return Response(body, media_type="application/json")


def review_routes(lobby: Any) -> list[BaseRoute]:
    """The routes over the Turbo lobby (moonshot.http.lobby.TurboLobby, read here, not imported: the
    lobby asks :func:`hint_refusal` whether its tables allow hints)."""
    results: dict[tuple[str, int, str], ReviewJob] = {}  # done, being written to the store
    failures: dict[tuple[str, int, str], str] = {}  # failed jobs, until a poll is told
    saving: set[asyncio.Task[None]] = set()

    def identity() -> Identity:
        found: Identity = lobby.identity
        return found

    def pool() -> Any:
        reviews = lobby.reviews
        if reviews is None:
            raise RequestError(503, REVIEWS_OFF, "reviews_off")
        return reviews

    def int_param(request: Request, key: str, default: int | None, low: int, top: int) -> int | None:
        text = request.query_params.get(key)
        if text is None:
            return default
        try:
            value = int(text)
        except ValueError:
            raise RequestError(400, f"{key} must be an integer", "bad_field", {"field": key}) from None
        if not low <= value <= top:
            raise RequestError(400, f"{key} must be {low}..{top}", "bad_range", {"field": key, "low": low, "high": top})
        return value

    def limited(rates: Any, key: str) -> None:
        wait = rates.take(key) if key else 0.0
        if wait:
            guard = lobby.guard
            assert guard is not None
            guard.refused += 1
            raise RequestError(429, rates.refusal(wait), "rate_limited", {"seconds": round(wait, 1)})

    def saver(game_id: str, seat: int, budget: str) -> Any:
        def on_done(job: ReviewJob) -> None:
            if job.status == "failed":
                failures[(game_id, seat, budget)] = job.error or "the review failed"  # said to the next poll
                return
            if lobby.store is None:
                return
            store = lobby.store

            async def save() -> None:
                try:
                    await save_review(store, game_id, seat, budget, job.result)
                except Exception:
                    log.exception("event=review_not_saved game=%s seat=%d", game_id, seat)
                finally:
                    results.pop((game_id, seat, budget), None)

            results[(game_id, seat, budget)] = job  # served from memory until stored
            task = asyncio.get_running_loop().create_task(save())
            saving.add(task)
            task.add_done_callback(saving.discard)

        return on_done

    async def review(request: Request, caller: Caller) -> Any:
        game_id = request.path_params["game_id"]
        seat = int_param(request, "seat", 0, 0, 3)
        simulations = int_param(request, "simulations", REVIEW_SIMULATIONS, 1, MAX_SIMULATIONS)
        assert seat is not None and simulations is not None
        if lobby.store is None:
            raise RequestError(404, "no games are stored (the server runs without --db)", "no_store")
        live = lobby.games.get(game_id)
        if live is not None and not live.finished:
            raise RequestError(409, "the game is not over", "game_not_over")
        budget = budget_key(simulations)
        key = (game_id, seat, budget)
        # a poll of a job under way costs no database read (the job passed the checks below)
        job = lobby.reviews.job(key) if lobby.reviews is not None else None
        if job is None:
            failed = failures.pop(key, None)
            if failed is not None:
                raise RequestError(500, f"{failed}: ask again to retry", "review_failed", {"reason": failed})
            kept = results.get(key)
            if kept is not None:  # done, being written to the store
                return done_response(kept.result)
            stored = await load_review_text(lobby.store, game_id, seat, budget)
            if stored is not None:
                return done_response(stored)
            job = await start(caller, game_id, seat, simulations, budget)
        position = lobby.reviews.position(job)
        body = {"status": job.status, "progress": job.progress, "position": position}
        # a running review is polled each second; one waiting its turn less often (its place in the
        # queue, in seconds, at most 10): a hundred waiting clients cost the server a few requests a second
        retry = 1 if job.status == "running" else min(MAX_RETRY_AFTER, 1 + position)
        return JSONResponse(body, status_code=202, headers={"Retry-After": str(retry)})

    async def start(caller: Caller, game_id: str, seat: int, simulations: int, budget: str) -> ReviewJob:
        """A new review job, once the stored game may be reviewed (its row: status and meta) and the
        caller may start one; the worker reads the game's actions (the event loop never does)."""
        state = await game_state(lobby.store, game_id)
        if state is None:
            raise RequestError(404, f"no stored game {game_id!r}", "no_stored_game", {"id": game_id})
        refused = await review_refusal(lobby, *state)
        if refused is not None:
            raise RequestError(refused[0], refused[1], refused[2])
        reviews = pool()
        full = reviews.refusal(caller.name)
        if full is not None:
            raise RequestError(429, full, "review_queue_full")
        guard = lobby.guard
        if guard is not None:
            limited(guard.reviews_by_name, caller.name)
            limited(guard.reviews_by_address, client_address.get())
        try:
            job: ReviewJob = reviews.submit(
                (game_id, seat, budget),
                caller.name,
                review_stored,  # the worker reads the game's actions: not the event loop
                (lobby.store.url, game_id, seat),
                {"simulations": simulations},
                on_done=saver(game_id, seat, budget),
            )
        except ReviewRefused as e:
            raise RequestError(429, str(e), "review_limit", {"reason": str(e)}) from None
        log.info("event=review_asked game=%s seat=%d budget=%s name=%s", game_id, seat, budget, json.dumps(caller.name))
        return job

    async def hint(request: Request, caller: Caller) -> Any:
        game_id = request.path_params["game_id"]
        g = lobby.games.get(game_id)
        if g is None:
            raise RequestError(404, f"no game {game_id!r} is being played here", "no_game", {"id": game_id})
        if g.hosted is None:
            raise RequestError(409, "the game has not started", "game_not_started")
        table = g.hosted.table
        if g.finished or table.done.done() or table.game.over:
            raise RequestError(409, "the game is over", "game_over")
        why = hint_refusal(g, caller.name, lobby.bot_names)
        if why is not None:
            raise RequestError(403, why, why.code, why.params)
        seat = g.hosted.seat_of(caller.name)
        if seat is None:  # hint_refusal found the name seated: the chair is a person's
            raise RequestError(403, f"{caller.name} has no seat in this game", "no_seat", {"name": caller.name})
        game = table.game
        if seat not in game.to_act():
            raise RequestError(409, "it is not your turn", "not_your_turn")
        view = seat_view(game, seat)  # the caller's own seat's information, never another's
        if len(view.legal) < 2:
            raise RequestError(409, "there is nothing to decide: one action is legal", "nothing_to_decide")
        reviews = pool()
        guard = lobby.guard
        if guard is not None:
            limited(guard.hints_by_name, caller.name)
        try:
            evaluation = await reviews.call(hint_task, view, think_ms=HINT_THINK_MS, seed=game.version)
        except ReviewRefused as e:
            raise RequestError(429, str(e), "review_limit", {"reason": str(e)}) from None
        except ReviewFailed as e:
            raise RequestError(500, str(e), "review_failed", {"reason": str(e)}) from None
        log.info("event=hint game=%s seat=%d name=%s", game_id, seat, json.dumps(caller.name))
        return hint_answer(evaluation, seat)

    async def hints(request: Request, caller: Caller) -> Any:
        """Whether the caller may ask for hints in this running game (the table page's button)."""
        g = lobby.games.get(request.path_params["game_id"])
        if g is None or g.hosted is None or g.finished:
            return {"hints": False}
        allowed = lobby.reviews is not None and hint_refusal(g, caller.name, lobby.bot_names) is None
        return {"hints": allowed}

    return [
        Route("/api/games/{game_id}/review", endpoint(review, identity), methods=["GET"]),
        Route("/api/games/{game_id}/hint", endpoint(hint, identity), methods=["POST"]),
        Route("/api/games/{game_id}/hint", endpoint(hints, identity), methods=["GET"]),
    ]


__all__ = [
    "HINT_THINK_MS",
    "MAX_SIMULATIONS",
    "REVIEW_SIMULATIONS",
    "done_response",
    "hint_answer",
    "hint_refusal",
    "practice_game",
    "review_refusal",
    "review_routes",
    "review_stored",
    "tournament_over",
]
