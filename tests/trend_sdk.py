"""A Trend client written the way the SDK's sample bots behave on the wire (not their code).

Blocking ``websocket-client`` connection, ``playerNumber`` sent as a string, a dispatch on
``eventName``, reading exactly the fields PROTOCOL-NOTES lists as read by real SDK-era bots (a
missing one is recorded as a failure, where a real bot would swallow the error and re-join), and
after every ``game_end``: optionally ``stop_game``, close, and the same ``join`` on a new connection.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import websocket  # websocket-client


@dataclass
class GameSeen:
    scores: dict[str, int]
    deals: int
    server_random: int


@dataclass
class SdkBot:
    url: str
    number: int
    name: str
    token: str = "12345678"
    games: int = 4  # game_end frames to see before stopping
    send_stop_game: bool = False
    seed: int = 0
    pick: str = "random"  # random | wrong (always an illegal card) | silent (never answers cards)
    wrong_numbers: bool = False  # answer with a dealNumber/roundNumber that never exists (dropped by the server)
    idle_check: float = 0.0  # after the last game: re-join once more and expect no close for this long
    think: float = 0.0  # seconds before each card (a slow bot)
    frames: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seen: list[GameSeen] = field(default_factory=list)
    connections: int = 0
    kept_open: bool | None = None
    lobby_code: str | None = None  # moonshot's join extension: meet at a table by its code
    sslopt: dict[str, Any] | None = None  # wss://: websocket-client's TLS options (ca_certs=...)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.cards: list[str] = []
        self.deals = 0
        self.server_random = 0
        self.lock = threading.Lock()

    # ------------------------------------------------------------ the connection loop
    def connect(self) -> websocket.WebSocket:
        ws = websocket.create_connection(self.url, timeout=60, sslopt=self.sslopt)
        self.connections += 1
        join = {"playerNumber": str(self.number), "playerName": self.name, "token": self.token}
        if self.lobby_code is not None:
            join["lobbyCode"] = self.lobby_code
        ws.send(json.dumps({"eventName": "join", "data": join}))
        return ws

    def run(self) -> None:
        ws = self.connect()
        try:
            while len(self.seen) < self.games:
                try:
                    raw = ws.recv()
                except (websocket.WebSocketConnectionClosedException, ConnectionError):
                    # a server killed with -9 shows as a closed socket or, as often, a reset one
                    raw = ""
                if not raw:  # (a close frame reads as an empty message)
                    self.errors.append("the server closed the connection")
                    return
                msg = json.loads(raw)
                self.frames.append(msg)
                try:
                    self.handle(ws, msg)
                except (KeyError, IndexError, TypeError, ValueError) as e:
                    self.errors.append(f"{msg.get('eventName')}: {e!r}")
                if msg.get("eventName") == "game_end":
                    if self.send_stop_game:
                        ws.send(json.dumps({"eventName": "stop_game", "data": {}}))
                    ws.close()
                    ws = self.connect()
            if self.idle_check:
                ws.settimeout(self.idle_check)
                try:
                    while True:
                        raw = ws.recv()
                        if not raw:
                            self.kept_open = False
                            return
                        self.frames.append(json.loads(raw))
                except websocket.WebSocketTimeoutException:
                    self.kept_open = True
                except (websocket.WebSocketConnectionClosedException, ConnectionError):
                    self.kept_open = False
        finally:
            ws.close()

    def send(self, ws: websocket.WebSocket, name: str, data: dict[str, Any]) -> None:
        ws.send(json.dumps({"eventName": name, "data": data}))

    def me(self, players: list[dict[str, Any]]) -> dict[str, Any]:
        return next(p for p in players if p["playerName"] == self.name)

    # ------------------------------------------------------------ exactly what real bots read
    def handle(self, ws: websocket.WebSocket, msg: dict[str, Any]) -> None:
        name, data = msg["eventName"], msg["data"]
        if name == "new_deal":
            [p["playerName"] for p in data["players"]]
            self.cards = list(self.me(data["players"])["cards"])
        elif name == "pass_cards":
            deal, cards = data["dealNumber"], data["self"]["cards"]
            chosen = self.rng.sample(cards, 3)
            self.send(ws, "pass_my_cards", {"dealNumber": deal + (100 if self.wrong_numbers else 0), "cards": chosen})
        elif name == "receive_opponent_cards":
            mine = self.me(data["players"])
            mine["cards"], mine["pickedCards"], mine["receivedCards"]
        elif name == "expose_cards":
            deal, cards = data["dealNumber"], data["self"]["cards"]
            self.send(ws, "expose_my_cards", {"dealNumber": deal, "cards": ["AH"] if self.rng.random() < 0.5 else []})
            assert "AH" in cards
        elif name == "expose_cards_end":
            data["dealNumber"]
            [(p["playerName"], p["exposedCards"]) for p in data["players"]]
        elif name == "your_turn":
            deal, rnd = data["dealNumber"], data["roundNumber"]
            me, candidates = data["self"]["cards"], data["self"]["candidateCards"]
            [data["players"][i]["dealScore"] for i in range(4)]
            data["roundPlayers"]
            assert set(candidates) <= set(me)
            if self.pick == "silent":
                return
            if self.pick == "wrong":
                card = next(r + s for s in "CDHS" for r in "23456789TJQKA" if r + s not in candidates)
            else:
                card = self.rng.choice(candidates)
            if self.wrong_numbers:
                # a round no deal has (not rnd + 1: a reply that arrived after its timeout would then
                # answer the next round's request, rightly, and the test would count one less timeout)
                rnd += 100
            if self.think:
                time.sleep(self.think)
            self.send(ws, "pick_card", {"dealNumber": deal, "roundNumber": rnd, "turnCard": card})
        elif name == "turn_end":
            data["turnCard"], data["turnPlayer"]
            if data["serverRandom"] and data["turnPlayer"] == self.name:
                self.server_random += 1
            self.cards = list(self.me(data["players"])["cards"])
        elif name == "round_end":
            data["roundPlayers"], data["roundPlayer"]
        elif name == "deal_end":
            self.deals += 1
            for p in data["players"]:
                p["playerName"], p["dealScore"], p["initialCards"], p["receivedCards"], p["pickedCards"]
        elif name == "game_end":
            scores = {p["playerName"]: p["gameScore"] for p in data["players"]}
            self.seen.append(GameSeen(scores, self.deals, self.server_random))
            self.deals = 0
            self.server_random = 0


__all__ = ["GameSeen", "SdkBot"]
